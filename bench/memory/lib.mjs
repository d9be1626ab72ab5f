// Shared by the memory scripts: start `pigeon start` from a built dist on a fresh data dir, and
// take heap snapshots of its API process.
import {
  chmodSync,
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { pigeonEnvironment, stopLeftoverPostgres } from '../lib/pigeon.mjs';
import { freePort, startNode } from '../lib/process.mjs';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const DEFAULT_DIST = new URL('../../packages/server/dist', import.meta.url).pathname;

/** A data dir and ports, kept across starts (a second start finds no migration pending). */
export async function freshSite() {
  const dataDir = mkdtempSync(join(os.tmpdir(), 'pigeon-memory-'));
  // As root, embedded PostgreSQL runs as the `postgres` user, which must be able to enter the dir.
  chmodSync(dataDir, 0o711);
  const [port, pgPort] = [await freePort(), await freePort()];
  return { dataDir, port, pgPort, remove: () => rmSync(dataDir, { recursive: true, force: true }) };
}

/** `node [nodeArgs] DIST/cli.js start`, resolved once GET /health answers. */
export async function startApi(site, { dist = DEFAULT_DIST, nodeArgs = [], extraEnv = {} } = {}) {
  const env = pigeonEnvironment({ ...site, rateLimitPerMinute: 1_000_000_000, extra: extraEnv });
  const pigeon = startNode({
    name: 'Pigeon',
    args: [...nodeArgs, join(resolve(dist), 'cli.js'), 'start'],
    env,
    ready: /Pigeon is listening on/,
  });
  await pigeon.ready;
  for (;;) {
    const res = await fetch(`http://127.0.0.1:${site.port}/health`).catch(() => undefined);
    if (res?.ok) break;
    await sleep(200);
  }
  return {
    pid: pigeon.pid,
    stop: async () => {
      await pigeon.stop();
      await stopLeftoverPostgres(site.dataDir);
    },
  };
}

/**
 * Signals `pid` (started with `--heapsnapshot-signal=SIGUSR2`, cwd = ours) and moves the
 * snapshot it writes to `target` once its size stops changing.
 */
export async function heapSnapshot(pid, target) {
  const cwd = process.cwd();
  const before = new Set(readdirSync(cwd));
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 600; i++) {
    await sleep(500);
    const file = readdirSync(cwd).find((f) => !before.has(f) && f.endsWith('.heapsnapshot') && f.includes(`.${pid}.`));
    if (!file) continue;
    if (!(await finished(join(cwd, file)))) continue;
    renameSync(join(cwd, file), target);
    return target;
  }
  throw new Error(`pid ${pid} wrote no heap snapshot`);
}

/** Node writes the snapshot as it walks the heap: done when its size holds and it ends in `}`. */
async function finished(file) {
  const size = statSync(file).size;
  await sleep(2000);
  if (statSync(file).size !== size || size === 0) return false;
  const fd = openSync(file, 'r');
  try {
    const tail = Buffer.alloc(1);
    readSync(fd, tail, 0, 1, size - 1);
    return tail.toString() === '}';
  } finally {
    closeSync(fd);
  }
}
