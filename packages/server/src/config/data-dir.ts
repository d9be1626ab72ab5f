import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** PostgreSQL keeps its own data directory's modes (0700/0600, or 0750/0640 with group access). */
const MANAGED_BY_POSTGRES = new Set(['postgres']);

export interface DataDirCheck {
  /** Paths whose mode was wider than allowed and has been narrowed. */
  fixed: string[];
}

/**
 * The data dir holds secrets, the outbox's `.eml` files (password-reset tokens, signed links) and
 * the embedded PostgreSQL: its files are 0600 and its directories 0700, checked (and narrowed) at
 * every start. The data dir itself is 0711 when `traversable` (root running the embedded
 * PostgreSQL as the `postgres` user, which must reach its directory inside): others may pass
 * through it but not list or read it.
 */
export function secureDataDir(dataDir: string, opts: { traversable: boolean }): DataDirCheck {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const fixed: string[] = [];
  const narrow = (path: string, mode: number) => {
    if ((lstatSync(path).mode & 0o777) !== mode) {
      chmodSync(path, mode);
      fixed.push(path);
    }
  };
  narrow(dataDir, opts.traversable ? 0o711 : 0o700);
  const walk = (dir: string, top: boolean) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (top && MANAGED_BY_POSTGRES.has(entry.name)) continue;
      if (entry.isSymbolicLink()) continue; // never follow a link out of the data dir
      if (entry.isDirectory()) {
        narrow(path, 0o700);
        walk(path, false);
      } else if (entry.isFile()) {
        narrow(path, 0o600);
      }
    }
  };
  walk(dataDir, true);
  return { fixed };
}
