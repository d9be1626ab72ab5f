import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import type { Queryable } from '../../db/sql.js';
import { claimEmails } from '../email-states/service.js';
import { sentRecorder } from './sent-recorder.js';

let pigeon: TestPigeon;
// The API alone: no delivery workers, so the test claims the queued mail itself.
beforeAll(async () => {
  pigeon = await startTestPigeon({ role: 'api' });
});
afterAll(() => pigeon?.stop());

let projects = 0;

/** `count` emails of a new project, queued through `POST /v1/send` and claimed (SENDING), in id order. */
async function claimedEmails(count: number): Promise<string[]> {
  const { auth } = await newProject(pigeon);
  const domain = `recorder${++projects}-${process.pid}.example.com`;
  await pigeon.request('POST', '/domains', { headers: auth, body: { domain } });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: { to: `r${i}@recorder.example`, from: `hello@${domain}`, subject: 'Hi', body: '<p>Hi</p>' },
    });
    expect(res.status).toBe(200);
    ids.push(res.body.data.emails[0].email);
  }
  const claimed = await claimEmails(pigeon.deps.db.pool, count);
  expect(claimed.map((e) => e.id).sort()).toEqual([...ids].sort());
  return ids;
}

describe('recording sent mail', () => {
  it('sends what arrives while a statement runs in one next statement, and records each email once', async () => {
    const [first, ...rest] = await claimedEmails(7);
    if (!first) throw new Error('nothing claimed');
    const { pool } = pigeon.deps.db;
    const groups: number[] = [];
    const counting: Queryable = {
      query: ((config: { values?: unknown[][] }) => {
        groups.push(config.values?.[0]?.length ?? 0);
        return pool.query(config as never);
      }) as Queryable['query'],
    };
    const record = sentRecorder(counting, true);

    // The first email's row is locked elsewhere, so its statement waits while the others arrive.
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM emails WHERE id = $1 FOR UPDATE', [first]);
      const recorded = [record({ id: first, file: null, providerId: null, refused: null })];
      await nextTurn();
      for (const id of rest) {
        recorded.push(record({ id, file: null, providerId: null, refused: null }));
        await nextTurn();
      }
      expect(groups).toEqual([1]);
      await holder.query('COMMIT');
      await Promise.all(recorded);
    } finally {
      holder.release();
    }

    expect(groups).toEqual([1, rest.length]);
    const { rows } = await pool.query(
      `SELECT e.status, e.sent_at IS NOT NULL AS sent, e.delivered_at IS NOT NULL AS delivered,
              (SELECT count(*)::int FROM events v WHERE v.data->>'emailId' = e.id::text AND v.name = 'email.sent') AS sent_events
       FROM emails e WHERE e.id = ANY($1::uuid[])`,
      [[first, ...rest]],
    );
    expect(rows).toHaveLength(7);
    for (const row of rows) expect(row).toEqual({ status: 'SENT', sent: true, delivered: true, sent_events: 1 });
  });

  it('fails every caller of a statement that fails, and the next statement still runs', async () => {
    const [id] = await claimedEmails(1);
    if (!id) throw new Error('nothing claimed');
    const record = sentRecorder(pigeon.deps.db.pool, true);
    await expect(record({ id: 'not-a-uuid', file: null, providerId: null, refused: null })).rejects.toThrow();
    await record({ id, file: null, providerId: null, refused: null });
    const { rows } = await pigeon.deps.db.pool.query('SELECT status FROM emails WHERE id = $1', [id]);
    expect(rows[0].status).toBe('SENT');
  });
});
