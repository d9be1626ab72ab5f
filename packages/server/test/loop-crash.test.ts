import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { queryRows, sql } from '../src/db/query.js';
import { bodyOf } from './api.js';
import { addresses, campaignToAll } from './campaigns.js';
import { startMailingPigeon } from './mailing-pigeon.js';
import { verifiedSender } from './sending.js';
import { killHard, stopGracefully, workerProcesses } from './worker-processes.js';
import { buildWorkflow, executionsOf, track, until } from './workflows.js';

/**
 * `kill -9` of a worker in the middle of a change-feed batch and of a campaign dispatch (delivery,
 * workflow steps and webhook deliveries have theirs in delivery-crash, workflow-crash and
 * webhook-crash). Each time the killed transaction is held on a table lock at the point of its
 * writes, the worker is killed there, and a second worker must finish the work exactly once.
 */
const { pigeon, sink, dns, databaseUrl, env } = await startMailingPigeon({}, { role: 'api' });
const workers = workerProcesses({ ...env, CHANGE_FEED_POLL_MS: '50', CAMPAIGN_DISPATCH_INTERVAL_MS: '100' });
afterAll(() => workers.stopAll());

/**
 * Holds `table` in SHARE mode (its writers wait); `waiting()` counts the statements waiting for
 * it, `release()` lets them go.
 */
async function lockTable(table: 'workflow_executions' | 'emails') {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('BEGIN');
  await client.query(`LOCK TABLE ${table} IN SHARE MODE`);
  const [{ pid }] = (await client.query('SELECT pg_backend_pid() AS pid')).rows;
  return {
    waiting: async () =>
      (
        await queryRows<{ n: number }>(
          pigeon.deps.db.pool,
          sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${pid}::int = ANY(pg_blocking_pids(pid))`,
        )
      )[0]?.n ?? 0,
    release: async () => {
      await client.query('COMMIT');
      await client.end();
    },
  };
}

it('change feed: a worker killed mid-batch (its consumer writing) redoes the batch once: one execution per event', async () => {
  const s = await verifiedSender(pigeon, dns);
  const wf = await buildWorkflow(pigeon, s.auth, {
    trigger: 'feed.crash',
    steps: [{ key: 'mark', type: 'UPDATE_CONTACT', config: { updates: { marked: true } } }],
    transitions: [],
  });
  const contacts = Array.from({ length: 12 }, (_, i) => `feed-crash-${i}@example.com`);
  for (const email of contacts) await track(pigeon, s.auth, email, 'feed.crash');

  const lock = await lockTable('workflow_executions');
  const first = workers.start();
  await first.ready;
  // The workflows consumer has read the batch and is inserting its executions, inside the
  // transaction that would move its cursor.
  expect(await until(lock.waiting, (n) => n > 0)).toBeGreaterThan(0);
  await killHard(first);
  await lock.release();
  expect(await executionsOf(pigeon, s.auth, wf.id)).toEqual([]);

  const second = workers.start();
  await second.ready;
  const done = await until(
    () => executionsOf(pigeon, s.auth, wf.id),
    (l) => l.length === contacts.length && l.every((x) => x.status === 'COMPLETED'),
    30_000,
  );
  await new Promise((r) => setTimeout(r, 500)); // room for a repeat to show up
  const all = await executionsOf(pigeon, s.auth, wf.id);
  expect(all).toHaveLength(contacts.length);
  expect(new Set(all.map((x) => x.contactId)).size).toBe(contacts.length);
  expect(done.every((x) => x.status === 'COMPLETED')).toBe(true);
  expect(await stopGracefully(second)).toBe(0);
}, 120_000);

it('campaign dispatcher: a worker killed while starting a scheduled campaign leaves it SCHEDULED; the next sends it once', async () => {
  const to = addresses('dispatch-crash-', 6, 'example.com');
  const run = await campaignToAll(pigeon, await verifiedSender(pigeon, dns), to);
  const lock = await lockTable('emails');
  await run.send({ scheduledFor: new Date(Date.now() + 500).toISOString() });

  const first = workers.start();
  await first.ready;
  // The dispatcher's transaction has moved the campaign to SENDING and is freezing its audience.
  expect(await until(lock.waiting, (n) => n > 0)).toBeGreaterThan(0);
  await killHard(first);
  await lock.release();
  const after = bodyOf(await run.client.campaigns.get({ params: run.params }), 200);
  expect(after.status).toBe('SCHEDULED');

  const second = workers.start();
  await second.ready;
  const ours = () => sink.messages.filter((m) => to.some((t) => m.to.includes(t)));
  await until(ours, (m) => m.length >= to.length, 30_000);
  expect((await run.finished()).status).toBe('SENT');
  await new Promise((r) => setTimeout(r, 500)); // room for a repeat to show up
  expect(
    ours()
      .map((m) => m.to)
      .sort(),
  ).toEqual(to.map((t) => [t]).sort());
  expect(await stopGracefully(second)).toBe(0);
}, 120_000);
