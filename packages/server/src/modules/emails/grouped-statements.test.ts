import { setImmediate as nextTurn } from 'node:timers/promises';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { queryRows, runStatement, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { queueWindowSource } from '../email-states/queue-window.js';
import { claimEmails } from '../email-states/service.js';
import { sentRecorder } from './sent-recorder.js';
import { sharedClaim } from './shared-claim.js';

let pigeon: TestPigeon;
// The API alone: no delivery workers, so the test claims the queued mail itself.
beforeAll(async () => {
  pigeon = await startTestPigeon({ role: 'api' });
});
afterAll(() => pigeon?.stop());

let projects = 0;

/** `count` emails of a new project, queued through `POST /v1/send`, in id order. */
async function queuedEmails(count: number): Promise<string[]> {
  const { auth } = await newProject(pigeon);
  const domain = `grouped${++projects}-${process.pid}.example.com`;
  const client = api(pigeon, auth);
  await client.domains.create({ body: { domain } });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await client.emails.send({
      body: { to: `r${i}@grouped.example`, from: `hello@${domain}`, subject: 'Hi', body: '<p>Hi</p>' },
    });
    expect(res.status).toBe(200);
    ids.push(bodyOf(res, 200).data.emails[0]?.email ?? '');
  }
  return ids;
}

/** `count` emails queued and claimed (SENDING), in id order. */
async function claimedEmails(count: number): Promise<string[]> {
  const ids = await queuedEmails(count);
  const pool = pigeon.deps.db.pool;
  const claimed = await claimEmails(pool, count, await queueWindowSource(pool).current());
  expect(claimed.map((e) => e.id).sort()).toEqual([...ids].sort());
  return ids;
}

/** The test Pigeon's pool, telling `seen` about each statement it runs. */
const watchedPool = (seen: (config: { values?: unknown[] }, rows: unknown[]) => void): Queryable => {
  const { pool } = pigeon.deps.db;
  return {
    // A named statement comes as one config object, an unnamed one as text and values.
    query: (async (textOrConfig: string | pg.QueryConfig, values?: unknown[]) => {
      const config = typeof textOrConfig === 'string' ? { text: textOrConfig, values } : textOrConfig;
      const result = await pool.query<Record<string, unknown>>(config);
      seen(config, result.rows);
      return result;
    }) as unknown as Queryable['query'],
  };
};

/** Holds `statement`'s lock in a transaction until `release` is called. */
async function holdLock(statement: Sql) {
  const holder = await pigeon.deps.db.pool.connect();
  await holder.query('BEGIN');
  await runStatement(holder, statement);
  return async () => {
    await holder.query('COMMIT');
    holder.release();
  };
}

describe('recording sent mail, one statement in flight', () => {
  it('sends what arrives while a statement runs in one next statement, and records each email once', async () => {
    const [first, ...rest] = await claimedEmails(7);
    if (!first) throw new Error('nothing claimed');
    const { pool } = pigeon.deps.db;
    const groups: number[] = [];
    const record = sentRecorder(
      watchedPool((config) => groups.push((config.values?.[0] as unknown[] | undefined)?.length ?? 0)),
      true,
    );

    // The first email's row is locked elsewhere, so its statement waits while the others arrive.
    const release = await holdLock(sql`SELECT 1 FROM emails WHERE id = ${first}::uuid FOR UPDATE`);
    const recorded = [record({ id: first, file: null, providerId: null, refused: null, relay: 'smtp' })];
    await nextTurn();
    for (const id of rest) {
      recorded.push(record({ id, file: null, providerId: null, refused: null, relay: 'smtp' }));
      await nextTurn();
    }
    await nextTurn();
    expect(groups).toEqual([]);
    await release();
    await Promise.all(recorded);

    expect(groups).toEqual([1, rest.length]);
    const rows = await queryRows(
      pool,
      sql`SELECT e.status, e.sent_at IS NOT NULL AS sent, e.delivered_at IS NOT NULL AS delivered,
              (SELECT count(*)::int FROM events v WHERE v.data->>'emailId' = e.id::text AND v.name = 'email.sent') AS sent_events
          FROM emails e WHERE e.id = ANY(${[first, ...rest]}::uuid[])`,
    );
    expect(rows).toHaveLength(7);
    for (const row of rows) expect(row).toEqual({ status: 'SENT', sent: true, delivered: true, sent_events: 1 });
  });

  it('fails every caller of a statement that fails, and the next statement still runs', async () => {
    const [id] = await claimedEmails(1);
    if (!id) throw new Error('nothing claimed');
    const record = sentRecorder(pigeon.deps.db.pool, true);
    await expect(
      record({ id: 'not-a-uuid', file: null, providerId: null, refused: null, relay: 'smtp' }),
    ).rejects.toThrow();
    await record({ id, file: null, providerId: null, refused: null, relay: 'smtp' });
    const rows = await queryRows(pigeon.deps.db.pool, sql`SELECT status FROM emails WHERE id = ${id}::uuid`);
    expect(rows).toEqual([{ status: 'SENT' }]);
  });
});

describe('claiming for the delivery loops, one statement in flight', () => {
  it('claims for every loop that asked meanwhile in the next statement, at most a batch each, no email twice', async () => {
    const ids = await queuedEmails(25);
    const statements: number[] = [];
    const claim = sharedClaim(
      watchedPool((_config, rows) => statements.push(rows.length)),
      10,
      queueWindowSource(pigeon.deps.db.pool),
    );

    // Holding the suppressions table keeps the first claim waiting (it reads each email's suppression).
    const release = await holdLock(sql`LOCK TABLE suppressions IN ACCESS EXCLUSIVE MODE`);
    const first = claim();
    await nextTurn();
    const others: Array<ReturnType<typeof claim>> = [];
    for (let i = 0; i < 3; i++) {
      others.push(claim());
      await nextTurn();
    }
    expect(statements).toEqual([]);
    await release();
    const batches = await Promise.all([first, ...others]);

    expect(statements).toEqual([10, 15]);
    expect(batches.map((rows) => rows.length)).toEqual([10, 10, 5, 0]);
    const claimed = batches.flat().map((e) => e.id);
    expect(new Set(claimed).size).toBe(25);
    expect([...claimed].sort()).toEqual([...ids].sort());
    const rows = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT DISTINCT status FROM emails WHERE id = ANY(${ids}::uuid[])`,
    );
    expect(rows).toEqual([{ status: 'SENDING' }]);
  });
});
