// What the harness knows about the Pigeon it started: the first-run keys and a direct connection
// to its embedded PostgreSQL (for seeding and EXPLAIN), plus stopping a PostgreSQL left behind.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** `pg` is a dependency of the server package, not of the workspace root. */
const requireFromServer = createRequire(new URL('../../packages/server/package.json', import.meta.url));

/**
 * The first project's keys from `<dataDir>/first-run.txt`, written on the first start with an
 * empty database (before Pigeon prints that it is listening).
 */
export function readFirstRun(dataDir) {
  const file = join(dataDir, 'first-run.txt');
  if (!existsSync(file)) throw new Error(`${file} does not exist: was the database not empty?`);
  const text = readFileSync(file, 'utf8');
  const secretKey = /Secret key[^:]*:\s*(sk_\S+)/.exec(text)?.[1];
  const publicKey = /Public key[^:]*:\s*(pk_\S+)/.exec(text)?.[1];
  const projectId = /Project:\s.*\(([0-9a-f-]{36})\)/.exec(text)?.[1];
  if (!secretKey || !projectId) throw new Error(`${file}: no secret key or project id in:\n${text}`);
  return { secretKey, publicKey, projectId };
}

/**
 * One `pg` client on the embedded PostgreSQL (user and database `pigeon`, password from
 * secrets.json). Queries on it run one after another. `close()` never hangs: an active query is
 * cancelled first (a seed INSERT can run for a minute).
 */
export async function connectDb({ dataDir, port }) {
  const pg = requireFromServer('pg');
  const { embeddedPostgresPassword: password } = JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8'));
  const config = { host: '127.0.0.1', port, user: 'pigeon', password, database: 'pigeon' };
  const client = new pg.Client(config);
  // PostgreSQL going away (Pigeon stopped) must not crash the harness.
  client.on('error', () => {});
  await client.connect();
  let active = 0;
  return {
    async query(text, values) {
      active++;
      try {
        return await client.query(text, values);
      } finally {
        active--;
      }
    },
    async close() {
      if (active > 0) {
        const canceller = new pg.Client(config);
        canceller.on('error', () => {});
        await canceller
          .connect()
          .then(() => canceller.query('SELECT pg_cancel_backend($1)', [client.processID]))
          .catch(() => {})
          .finally(() => canceller.end().catch(() => {}));
      }
      await Promise.race([client.end().catch(() => {}), new Promise((r) => setTimeout(r, 3000).unref())]);
    },
  };
}

/**
 * After Pigeon has exited: a PostgreSQL still running on its data dir (Pigeon killed, or it
 * crashed) is told to shut down (SIGINT = fast shutdown), then killed. It runs in its own
 * session, so stopping Pigeon's process group does not reach it; its pid is in postmaster.pid.
 */
export async function stopLeftoverPostgres(dataDir) {
  const pidFile = join(dataDir, 'postgres', 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  // A stale pid file (PostgreSQL killed) may name an unrelated process by now.
  let cmdline = '';
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {}
  if (!cmdline.includes('postgres') || !cmdline.includes(dataDir)) return;
  console.error(`PostgreSQL (pid ${pid}) of ${dataDir} is still running; stopping it`);
  try {
    process.kill(pid, 'SIGINT');
  } catch {}
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * The environment of a Pigeon the bench starts: free ports, a fresh data dir, quiet logs, every
 * keyed request counted against a limit a load run never reaches, `extra` on top; never
 * `DATABASE_URL` (always its own embedded PostgreSQL), `SMTP_URL` only when `extra` names it.
 */
export function pigeonEnvironment({ port, pgPort, dataDir, rateLimitPerMinute, extra = {} }) {
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    PIGEON_DATA_DIR: dataDir,
    EMBEDDED_POSTGRES_PORT: String(pgPort),
    SHUTDOWN_TIMEOUT_SECONDS: '10',
    RATE_LIMIT_PER_MINUTE: String(rateLimitPerMinute),
    ...extra,
  };
  delete env.DATABASE_URL;
  if (!('SMTP_URL' in extra)) delete env.SMTP_URL;
  return env;
}

/** `--pigeon-env KEY=VALUE` options as an env object. */
export const envFromPairs = (pairs) =>
  Object.fromEntries(pairs.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
