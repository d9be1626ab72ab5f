import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { newProject } from './accounts.js';
import { killAllCli, startCli } from './cli.js';
import { createTestDatabase, startTestPigeon } from './helpers.js';
import { startTarget } from './webhook-targets.js';
import { until } from './workflows.js';

const dirs: string[] = [];
afterAll(async () => {
  await killAllCli();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

it('a worker killed mid-burst loses no event webhook; a repeat carries the same webhook-id', async () => {
  // Each answer takes 50 ms, so many deliveries are in flight when the worker dies.
  const hook = await startTarget((_req, res) => setTimeout(() => res.end('ok'), 50));
  const databaseUrl = await createTestDatabase();
  const api = await startTestPigeon({ databaseUrl, role: 'api', env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  try {
    const { auth } = await newProject(api);
    const created = await api.request('POST', '/webhook-endpoints', {
      headers: auth,
      body: { url: `${hook.origin}/burst`, eventTypes: ['burst.*'] },
    });
    expect(created.status, created.text).toBe(201);
    const dir = mkdtempSync(join(tmpdir(), 'pigeon-webhook-crash-'));
    chmodSync(dir, 0o755);
    dirs.push(dir);
    const env = {
      PIGEON_DATA_DIR: dir,
      DATABASE_URL: databaseUrl,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_CLAIM_TIMEOUT_SECONDS: '2',
      WEBHOOK_ENDPOINT_CONCURRENCY: '8',
      CHANGE_FEED_POLL_MS: '50',
    };
    const EVENTS = 150;
    for (let i = 0; i < EVENTS; i++) {
      const res = await api.request('POST', '/v1/track', {
        headers: auth,
        body: { email: `burst${i}@example.com`, event: 'burst.happened', data: { n: i } },
      });
      expect(res.status).toBe(200);
    }

    const first = startCli(['worker'], env);
    await first.ready;
    await until(
      () => hook.received.length,
      (n) => n >= 30,
      30_000,
    );
    first.child.kill('SIGKILL');
    await first.exited;
    const { rows } = await api.deps.db.pool.query(
      "SELECT count(*)::int AS n FROM webhook_messages WHERE status = 'SENDING'",
    );
    expect(rows[0].n).toBeGreaterThan(0); // the kill really happened with deliveries in flight
    expect(hook.received.length).toBeLessThan(EVENTS);

    const second = startCli(['worker'], env);
    await second.ready;
    const byEvent = () => {
      const ids = new Map<number, Set<string>>();
      for (const r of hook.received) {
        const n = JSON.parse(r.body).data.data.n as number;
        ids.set(n, (ids.get(n) ?? new Set()).add(String(r.headers['webhook-id'])));
      }
      return ids;
    };
    const seen = await until(byEvent, (ids) => ids.size === EVENTS, 60_000);
    expect(seen.size).toBe(EVENTS); // every event arrived at least once
    for (const ids of seen.values()) expect(ids.size).toBe(1); // a repeat is the same delivery
    const states = await until(
      async () =>
        (await api.deps.db.pool.query('SELECT status, count(*)::int AS n FROM webhook_messages GROUP BY status')).rows,
      (r) => r.length === 1,
    );
    expect(states).toEqual([{ status: 'SUCCEEDED', n: EVENTS }]);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  } finally {
    await api.stop();
    await hook.close();
  }
}, 120_000);
