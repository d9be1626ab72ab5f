import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject, type TestProject } from '../../../test/accounts.js';
import {
  ensureEmailsPartition,
  idAt,
  insertEmailRow,
  monthStart,
  setEmailStatus,
} from '../../../test/fixtures/email-states.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { highestIdAt, lowestIdAt } from '../../db/ids.js';
import { historyPartitions } from '../../db/partitions.js';
import { queryRows, sql } from '../../db/query.js';
import { NOTIFY_CHANNEL } from './queue.js';
import { analyzeQueuePartitions, queueBounds, queueWindowSource, REQUEUED_PAYLOAD } from './queue-window.js';
import { requeueFailedEmails } from './requeue.js';
import { claimEmails } from './service.js';

const DAY = 86_400_000;
let pigeon: TestPigeon;
let pool: pg.Pool;
let project: TestProject;

const emailRow = (id: string, status: string) => insertEmailRow(pool, { id, projectId: project.id, status });
const setStatus = (id: string, status: string) => setEmailStatus(pool, id, status);

beforeAll(async () => {
  // The API alone: nothing claims the rows these tests put in the queue but the tests.
  pigeon = await startTestPigeon({ role: 'api' });
  pool = pigeon.deps.db.pool;
  for (const months of [3, 6]) await ensureEmailsPartition(pool, monthStart(months));
  ({ project } = await newProject(pigeon));
});
afterAll(() => pigeon?.stop());

describe('the queue window', () => {
  it('spans the partitions holding mail on its way and at least a day either side of now; the whole table when the DEFAULT partition holds some', async () => {
    const now = Date.now();
    const recent = { from: lowestIdAt(now - DAY), to: highestIdAt(now + DAY) };
    const partitionOf = async (id: string) =>
      (await historyPartitions(pool, 'emails')).find(
        (p) => p.from !== null && p.to !== null && p.from <= id && id < p.to,
      );
    expect(await queueBounds(pool, now)).toEqual(recent);

    const old = idAt(monthStart(6) + DAY);
    const sixMonths = await partitionOf(old);
    expect(sixMonths?.from).toBeDefined();
    await emailRow(old, 'QUEUED');
    expect(await queueBounds(pool, now)).toEqual({ from: sixMonths?.from, to: recent.to });
    await setStatus(old, 'SENDING'); // a claim counts as on its way too
    expect(await queueBounds(pool, now)).toEqual({ from: sixMonths?.from, to: recent.to });
    await setStatus(old, 'SENT');
    expect(await queueBounds(pool, now)).toEqual(recent);

    // An id two months ahead (a clock far off) lands in a partition made ahead: the window reaches it.
    const ahead = idAt(monthStart(-2) + DAY);
    const aheadPartition = await partitionOf(ahead);
    expect(aheadPartition?.to).toBeDefined();
    await emailRow(ahead, 'QUEUED');
    expect(await queueBounds(pool, now)).toEqual({ from: recent.from, to: aheadPartition?.to });
    await setStatus(ahead, 'CANCELLED');

    // No partition covers 30 months ago: that row lands in the DEFAULT partition, which may hold any id.
    const stray = idAt(monthStart(30) + DAY);
    await emailRow(stray, 'QUEUED');
    const [home] = await queryRows<{ t: string }>(
      pool,
      sql`SELECT tableoid::regclass::text AS t FROM emails WHERE id = ${stray}::uuid`,
    );
    expect(home?.t).toBe('emails_default');
    expect(await queueBounds(pool, now)).toEqual({
      from: '00000000-0000-0000-0000-000000000000',
      to: 'ffffffff-ffff-ffff-ffff-ffffffffffff',
    });
    await setStatus(stray, 'CANCELLED');
  });

  it('claims FAILED mail from months ago once its requeue said so: the NOTIFY names it and the window moves down', async () => {
    const source = queueWindowSource(pool);
    const old = idAt(monthStart(3) + 2 * DAY);
    await emailRow(old, 'FAILED');
    const before = await source.current();
    expect(before.from > old).toBe(true);

    const listener = await pool.connect();
    const payloads: string[] = [];
    listener.on('notification', (n) => payloads.push(n.payload ?? ''));
    await listener.query(`LISTEN ${NOTIFY_CHANNEL}`);
    try {
      expect((await requeueFailedEmails(pool, project.id)).requeued).toBe(1);
      await listener.query('SELECT 1'); // the notification arrives before this answer
      expect(payloads).toContain(REQUEUED_PAYLOAD);
    } finally {
      await listener.query(`UNLISTEN ${NOTIFY_CHANNEL}`);
      listener.release();
    }

    source.invalidate();
    const after = await source.current();
    expect(after.from <= old).toBe(true);
    const claimed = await claimEmails(pool, 10, after);
    expect(claimed.map((e) => e.id)).toContain(old);
    await setStatus(old, 'SENT');
  });

  it('plans a claim over the partitions inside the window only', async () => {
    const window = await queueWindowSource(pool).current();
    const rows = await queryRows<{ 'QUERY PLAN': string }>(
      pool,
      sql`EXPLAIN SELECT id FROM emails WHERE id BETWEEN ${window.from}::uuid AND ${window.to}::uuid AND status = 'QUEUED'`,
    );
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    const partitions = await historyPartitions(pool, 'emails');
    const outside = partitions.filter((p) => p.to !== null && p.to <= window.from).map((p) => p.name);
    expect(outside.length).toBeGreaterThan(0);
    for (const name of outside) expect(plan).not.toContain(name);
  });

  it('gathers statistics of the partitions that take new mail, and of no other', async () => {
    for (let i = 0; i < 300; i++) await emailRow(idAt(Date.now()), 'SENT');
    const stats = () =>
      queryRows<{ relname: string; analyzed: boolean; reltuples: number }>(
        pool,
        sql`SELECT s.relname, s.last_analyze IS NOT NULL AS analyzed, c.reltuples::float8 AS reltuples
            FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname LIKE 'emails_p%'`,
      );
    const current = (await historyPartitions(pool, 'emails')).find(
      (p) => p.from !== null && p.to !== null && p.from <= lowestIdAt(Date.now()) && lowestIdAt(Date.now()) < p.to,
    );
    await analyzeQueuePartitions(pool);
    const after = await stats();
    expect(after.find((r) => r.relname === current?.name)).toMatchObject({ analyzed: true });
    expect(after.find((r) => r.relname === current?.name)?.reltuples).toBeGreaterThanOrEqual(300);
    // Partitions that end over a day ago (the window's margin) take no new mail.
    const past = (await historyPartitions(pool, 'emails')).filter(
      (p) => p.to !== null && p.to <= lowestIdAt(Date.now() - DAY),
    );
    const older = after.filter((r) => past.some((p) => p.name === r.relname));
    expect(older.length).toBeGreaterThan(0);
    for (const r of older) expect(r.analyzed).toBe(false);
  });
});
