import { afterAll, expect, it } from 'vitest';
import { newProject } from './accounts.js';
import { api as client } from './api.js';
import { createTestDatabase, startTestPigeon } from './helpers.js';
import { startTarget } from './webhook-targets.js';
import { killHard, stopGracefully, workerProcesses } from './worker-processes.js';
import { until } from './workflows.js';

let workers: ReturnType<typeof workerProcesses> | undefined;
afterAll(() => workers?.stopAll());

/**
 * A burst of tracked events with an endpoint whose answers take `answerMs`; the worker is killed
 * once `killAt` have arrived, and another is started. Answers the delivery states at the kill.
 */
async function burstWithKill(answerMs: number, events: number, killAt: number) {
  const hook = await startTarget((_req, res) => setTimeout(() => res.end('ok'), answerMs));
  const databaseUrl = await createTestDatabase();
  const api = await startTestPigeon({ databaseUrl, role: 'api', env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  try {
    const { auth } = await newProject(api);
    const created = await client(api, auth).webhookEndpoints.create({
      body: { url: `${hook.origin}/burst`, eventTypes: ['burst.*'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    workers = workerProcesses({
      DATABASE_URL: databaseUrl,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_CLAIM_TIMEOUT_SECONDS: '2',
      WEBHOOK_ENDPOINT_CONCURRENCY: '8',
      CHANGE_FEED_POLL_MS: '50',
    });
    for (let i = 0; i < events; i++) {
      const res = await client(api, auth).events.track({
        body: { email: `burst${i}@example.com`, event: 'burst.happened', data: { n: i } },
      });
      expect(res.status).toBe(200);
    }

    const first = workers.start();
    await first.ready;
    await until(
      () => hook.received.length,
      (n) => n >= killAt,
      30_000,
    );
    await killHard(first);
    const { rows: atKill } = await api.deps.db.pool.query<{ status: string; n: number }>(
      'SELECT status, count(*)::int AS n FROM webhook_messages GROUP BY status ORDER BY status',
    );
    expect(hook.received.length).toBeLessThan(events); // the kill really happened mid-burst

    const second = workers.start();
    await second.ready;
    const byEvent = () => {
      const ids = new Map<number, Set<string>>();
      for (const r of hook.received) {
        const n = JSON.parse(r.body).data.data.n as number;
        ids.set(n, (ids.get(n) ?? new Set()).add(String(r.headers['webhook-id'])));
      }
      return ids;
    };
    const seen = await until(byEvent, (ids) => ids.size === events, 60_000);
    expect(seen.size).toBe(events); // every event arrived at least once
    for (const ids of seen.values()) expect(ids.size).toBe(1); // a repeat is the same delivery
    const states = await until(
      async () =>
        (await api.deps.db.pool.query('SELECT status, count(*)::int AS n FROM webhook_messages GROUP BY status')).rows,
      (r) => r.length === 1 && r[0].n === events,
    );
    expect(states).toEqual([{ status: 'SUCCEEDED', n: events }]);
    expect(await stopGracefully(second)).toBe(0);
    return atKill;
  } finally {
    await api.stop();
    await hook.close();
  }
}

it('a worker killed while its feed batch is sending loses no event webhook; the batch redone carries the same webhook-ids', async () => {
  // Answers in 50 ms: the batch sends its deliveries itself and writes them when they have
  // ended, so at the kill nothing of it is written; the next worker reads the batch again.
  const atKill = await burstWithKill(50, 150, 30);
  expect(atKill).toEqual([]);
}, 120_000);

it('a worker killed with claimed deliveries in flight loses none; a repeat carries the same webhook-id', async () => {
  // Answers in 700 ms (longer than a batch waits for a stalled endpoint): the batch writes the
  // requests under way as SENDING and the rest PENDING, for the claim loop; the kill leaves
  // claims that the next worker takes over once they time out.
  const atKill = await burstWithKill(700, 48, 12);
  expect(atKill.find((s) => s.status === 'SENDING')?.n ?? 0).toBeGreaterThan(0);
}, 120_000);
