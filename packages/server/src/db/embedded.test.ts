import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../test/ports.js';
import { until } from '../../test/until.js';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from './embedded.js';
import { queryRows, sql } from './query.js';

interface Entry {
  level: number;
  msg: string;
  postgres?: string;
}

const ERROR_LEVEL = 50;

describe('embedded PostgreSQL', () => {
  const entries: Entry[] = [];
  let dir: string;
  let server: EmbeddedPostgresHandle;
  let stopped = false;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pigeon-test-embedded-'));
    chmodSync(dir, 0o755); // as root, PostgreSQL runs as the postgres user and must reach its data dir
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) if (line) entries.push(JSON.parse(line) as Entry);
        done();
      },
    });
    server = await startEmbeddedPostgres({
      dataDir: join(dir, 'data'),
      port: await freePort(),
      password: 'pigeon-test',
      logger: pino({ level: 'warn' }, sink),
    });
  }, 120_000);

  afterAll(async () => {
    if (!stopped) await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs a crashed server process as an error with its statement, and stops when asked during the recovery', async () => {
    const victim = new pg.Client({ connectionString: server.url('postgres') });
    await victim.connect();
    victim.on('error', () => {}); // the crash cuts the connection
    const pid = (victim as unknown as { processID: number }).processID;
    const running = victim.query('SELECT pg_sleep(60)\n  AS crash_probe').catch((err: Error) => err);
    const started = await until(async () => {
      const client = new pg.Client({ connectionString: server.url('postgres') });
      await client.connect();
      try {
        const rows = await queryRows(
          client,
          sql`SELECT 1 FROM pg_stat_activity WHERE pid = ${pid}::int AND query LIKE '%crash_probe%'`,
        );
        return rows.length === 1;
      } finally {
        await client.end();
      }
    }, Boolean);
    expect(started).toBe(true);

    process.kill(pid, 'SIGSEGV');

    expect(await running).toBeInstanceOf(Error);
    await until(() => entries.some((e) => e.postgres === 'AS crash_probe'), Boolean);
    const reports = entries.filter((e) => e.level === ERROR_LEVEL).map((e) => e.postgres ?? '');
    expect(reports.some((line) => line.includes(`(PID ${pid}) was terminated by signal 11`))).toBe(true);
    // The statement, a line of PostgreSQL's output for each of its lines.
    expect(reports.some((line) => line.endsWith('Failed process was running: SELECT pg_sleep(60)'))).toBe(true);
    expect(reports).toContain('AS crash_probe');
    await victim.end().catch(() => {});
    // Asked at once, while PostgreSQL recovers from the crash (PostgreSQL 18.4 would never finish it).
    await server.stop();
    stopped = true;
    expect(entries.filter((e) => e.msg.includes('did not shut down in time'))).toEqual([]);
  });
});
