import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvent } from '../../test/fixtures/event-log.js';
import { insertBareProject } from '../../test/fixtures/projects.js';
import { databaseMigratedTo, poolWithProject } from '../../test/helpers.js';
import { until } from '../../test/until.js';
import { seedHistory } from './history-seed.js';
import { columnsOf, ensureHistoryPartitions, historyPartitions, moveUnpartitionedHistory } from './partitions.js';
import { queryRows, raw, type Sql, sql } from './query.js';

const BENCH_BUNDLE = fileURLToPath(new URL('../../dist/bench.js', import.meta.url));
const PROJECT = '01900000-0000-7000-8000-00000000a001';

async function one<T extends pg.QueryResultRow>(pool: pg.Pool, statement: Sql): Promise<T> {
  const [row] = await queryRows<T>(pool, statement);
  return row as T;
}

/** An id of the given time, as uuidv7 would make it then. */
const idAt = async (pool: pg.Pool, at: Date) =>
  (
    await one<{ id: string }>(
      pool,
      sql`SELECT overlay(uuidv7_floor(${at})::text placing '7abc-8def-' || substr(md5(random()::text), 1, 12) from 15) AS id`,
    )
  ).id;

describe('history partitions', () => {
  let pool: pg.Pool;

  beforeAll(async () => {
    pool = await poolWithProject(PROJECT, 3);
  });
  afterAll(() => pool.end());

  it('keeps the current month and the next three ready, once', async () => {
    const at = new Date(Date.UTC(2031, 4, 20));
    const created = await ensureHistoryPartitions(pool, at);
    expect(created).toEqual([
      'emails_p203105',
      'emails_p203106',
      'emails_p203107',
      'emails_p203108',
      'events_p203105',
      'events_p203106',
      'events_p203107',
      'events_p203108',
    ]);
    expect(await ensureHistoryPartitions(pool, at)).toEqual([]);
    const june = (await historyPartitions(pool, 'events')).find((p) => p.name === 'events_p203106');
    const bounds = await one<{ from: string; to: string }>(
      pool,
      sql`SELECT uuidv7_floor('2031-06-01T00:00:00Z') AS from, uuidv7_floor('2031-07-01T00:00:00Z') AS to`,
    );
    expect(june).toEqual({ name: 'events_p203106', ...bounds });
  });

  it('never loses a write when the job fell behind, and the late partition starts after the DEFAULT rows', async () => {
    const lateMonth = new Date(Date.UTC(2035, 1, 1));
    const early = await idAt(pool, new Date(Date.UTC(2035, 1, 3)));
    await insertEvent(pool, { id: early, projectId: PROJECT, name: 'late.write' });
    const where = async (id: string) =>
      (await one<{ part: string }>(pool, sql`SELECT tableoid::regclass::text AS part FROM events WHERE id = ${id}`))
        .part;
    expect(await where(early)).toBe('events_default');

    expect(await ensureHistoryPartitions(pool, lateMonth, 0)).toEqual(['emails_p203502', 'events_p203502']);
    const later = await idAt(pool, new Date(Date.UTC(2035, 1, 20)));
    const before = await idAt(pool, new Date(Date.UTC(2035, 1, 2)));
    for (const id of [later, before]) await insertEvent(pool, { id, projectId: PROJECT, name: 'x' });
    expect(await where(early)).toBe('events_default');
    expect(await where(before)).toBe('events_default');
    expect(await where(later)).toBe('events_p203502');
  });

  it('prunes to one partition for an id and to the months of an id range', async () => {
    await ensureHistoryPartitions(pool, new Date());
    const id = await idAt(pool, new Date());
    const byId = await pool.query(`EXPLAIN (FORMAT JSON) SELECT * FROM events WHERE id = '${id}'`);
    const scanned = JSON.stringify(byId.rows[0]).match(/"Relation Name":"events_[a-z0-9]+"/g) ?? [];
    expect(scanned).toHaveLength(1);
    const month = await queryRows(
      pool,
      sql`EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM events
          WHERE project_id = ${PROJECT} AND id >= uuidv7_floor(now() - interval '10 days') AND id < uuidv7_floor(now())`,
    );
    const partitions = (await historyPartitions(pool, 'events')).length;
    const touched = JSON.stringify(month[0]).match(/"Relation Name":"events_[a-z0-9]+"/g) ?? [];
    expect(partitions).toBeGreaterThan(5);
    expect(touched.length).toBeLessThanOrEqual(2);
  });
});

describe('converting an existing database', () => {
  let url: string;
  let pool: pg.Pool;

  beforeAll(async () => {
    const db = await databaseMigratedTo('Migration20261206010000_send_options');
    url = db.url;
    pool = new pg.Pool({ connectionString: url, max: 3 });
    await insertBareProject(pool, PROJECT, 'history');
    await seedHistory(pool, { projectId: PROJECT, contacts: 500, emails: 4_000, events: 40_000, days: 365 });
    await db.up();
  }, 120_000);
  // Left in place like every test database (the run's server goes with it): DROP DATABASE waits
  // for a checkpoint while holding a transaction id, 17 s and more on a loaded machine, and that
  // held back the change feed of every other test file on the server (ARCHITECTURE.md, Change feed).
  afterAll(() => pool?.end());

  /** Rows and an md5 of them, over `columns` (later migrations add columns to the new tables only). */
  const checksum = async (table: string, columns?: string[]) => {
    const list = (columns ?? (await columnsOf(pool, table))).map((c) => `"${c}"`).join(', ');
    return one<{ n: number; sum: string }>(
      pool,
      sql`SELECT count(*)::int AS n, md5(string_agg(t::text, ',' ORDER BY t.id)) AS sum
       FROM (SELECT ${raw(list)} FROM ${raw(table)}) t`,
    );
  };

  it('moves every row exactly once after a kill -9 in the middle, then validates the references', async () => {
    const [eventColumns, emailColumns] = [
      await columnsOf(pool, 'events_unpartitioned'),
      await columnsOf(pool, 'emails_unpartitioned'),
    ];
    const events = await checksum('events_unpartitioned');
    const emails = await checksum('emails_unpartitioned');
    expect(events.n).toBe(40_000);
    expect((await checksum('events')).n).toBe(0);
    const clicks = await one<{ n: number }>(pool, sql`SELECT count(*)::int AS n FROM email_link_clicks`);
    const suppressed = await one<{ n: number }>(
      pool,
      sql`SELECT count(*)::int AS n FROM suppressions WHERE email_id IS NOT NULL`,
    );
    expect(clicks.n).toBeGreaterThan(0);
    expect(suppressed.n).toBeGreaterThan(0);

    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import pg from 'pg';
         const { moveUnpartitionedHistory } = await import(${JSON.stringify(BENCH_BUNDLE)});
         await moveUnpartitionedHistory(new pg.Pool({ connectionString: ${JSON.stringify(url)} }), { batch: 100 });`,
      ],
      { cwd: fileURLToPath(new URL('../..', import.meta.url)), stdio: 'ignore' },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await until(
      async () => (await one<{ n: number }>(pool, sql`SELECT count(*)::int AS n FROM events`)).n,
      (n) => n > 2_000,
      30_000,
    );
    child.kill('SIGKILL');
    await exited;

    const partial = await one<{ moved: number; left: number }>(
      pool,
      sql`SELECT (SELECT count(*)::int FROM events) AS moved, (SELECT count(*)::int FROM events_unpartitioned) AS left`,
    );
    expect(partial.left).toBeGreaterThan(0);
    expect(partial.moved + partial.left).toBe(40_000);

    await moveUnpartitionedHistory(pool, { batch: 5_000 });
    expect(await checksum('events', eventColumns)).toEqual(events);
    expect(await checksum('emails', emailColumns)).toEqual(emails);
    expect(await one<{ n: number }>(pool, sql`SELECT count(*)::int AS n FROM email_link_clicks`)).toEqual(clicks);
    expect(
      await one<{ n: number }>(pool, sql`SELECT count(*)::int AS n FROM suppressions WHERE email_id IS NOT NULL`),
    ).toEqual(suppressed);
    const legacy = await one<{ events: string | null; emails: string | null }>(
      pool,
      sql`SELECT to_regclass('events_unpartitioned')::text AS events, to_regclass('emails_unpartitioned')::text AS emails`,
    );
    expect(legacy).toEqual({ events: null, emails: null });
    const unvalidated = await pool.query(
      `SELECT conname FROM pg_constraint WHERE confrelid = 'emails'::regclass AND conrelid IN
       ('email_link_clicks'::regclass, 'suppressions'::regclass) AND NOT convalidated`,
    );
    expect(unvalidated.rows).toEqual([]);
    // Spread over the months of the year, nothing in DEFAULT, and no feed row for a moved event.
    const spread = await pool.query(
      `SELECT tableoid::regclass::text AS part, count(*)::int AS n FROM events GROUP BY 1 ORDER BY 1`,
    );
    expect(spread.rows.length).toBeGreaterThanOrEqual(12);
    expect(spread.rows.map((r) => r.part)).not.toContain('events_default');
    expect(
      (await one<{ n: number }>(pool, sql`SELECT count(*)::int AS n FROM contact_changes WHERE kind = 'event'`)).n,
    ).toBe(40_000);
  }, 120_000);
});
