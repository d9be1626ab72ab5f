import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../test/accounts.js';
import { api, bodyOf } from '../../test/api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../test/helpers.js';

const metricsText = async (port: number, host = '127.0.0.1') => {
  const res = await fetch(`http://${host}:${port}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return res.text();
};

/** The value of one series, found by its name and a subset of its labels. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const match = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    const found = Object.fromEntries([...(match?.[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match?.[2]);
  }
  return undefined;
}

describe('metrics are off by default', () => {
  let pigeon: TestPigeon;
  beforeAll(async () => {
    pigeon = await startTestPigeon();
  });
  afterAll(() => pigeon?.stop());

  it('opens no listener and the public API port does not serve /metrics', async () => {
    expect(pigeon.deps.config.metrics.port).toBeUndefined();
    expect(pigeon.metricsPort).toBeUndefined();
    // untyped: outside the contract (/metrics)
    expectEnvelope(await pigeon.request('GET', '/metrics'), 404, 'NOT_FOUND');
  });
});

describe('with METRICS_PORT', () => {
  let pigeon: TestPigeon;
  let port: number;
  beforeAll(async () => {
    pigeon = await startTestPigeon({
      env: { METRICS_PORT: '0', WORKER_HEARTBEAT_SECONDS: '1', RATE_LIMIT_PER_MINUTE: '30' },
    });
    port = pigeon.metricsPort as number;
  });
  afterAll(() => pigeon?.stop());

  it('serves them on their own loopback listener, never on the API port', async () => {
    expect(port).toBeGreaterThan(0);
    expect(port).not.toBe(new URL(pigeon.url).port);
    expect(pigeon.deps.config.metrics.host).toBe('127.0.0.1');
    // untyped: outside the contract (/metrics)
    expectEnvelope(await pigeon.request('GET', '/metrics'), 404, 'NOT_FOUND');
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(404);
    const text = await metricsText(port);
    expect(sample(text, 'pigeon_nodejs_heap_size_used_bytes', { process: 'all' })).toBeGreaterThan(0);
    // The detailed health (the relay's error text included) is here, not on the public port.
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', database: 'up', mailTransport: { state: 'up' } });
    // Any address of this machine other than loopback: nothing listens there.
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal);
    if (outside) await expect(fetch(`http://${outside.address}:${port}/metrics`)).rejects.toThrow();
  });

  it('times requests by route template, never by path, and counts rate-limited ones', async () => {
    const { auth, project } = await newProject(pigeon);
    const contacts = api(pigeon, auth).contacts;
    // Routes answered before express (http/fast-routes.ts) are timed the same way.
    const tracked = await api(pigeon, { authorization: `Bearer ${project.publicKey}` }).events.track({
      body: { email: 't@metrics.example', event: 'metered' },
    });
    expect(tracked.status).toBe(200);
    // untyped: outside the contract (the open-tracking pixel)
    expect((await pigeon.request('GET', '/t/o/not-a-token.gif')).status).toBe(200);
    const created = await contacts.create({ body: { email: 'm@metrics.example' } });
    expect(created.status).toBe(201);
    const id = bodyOf(created, 201).id;
    expect((await contacts.get({ params: { id } })).status).toBe(200);
    // untyped: outside the contract (an unknown route)
    await pigeon.request('GET', '/no/such/route'); // not in the contract, on purpose
    const text = await metricsText(port);
    const route = { method: 'GET', route: '/contacts/:id', status_class: '2xx' };
    expect(sample(text, 'pigeon_http_request_duration_seconds_count', route)).toBeGreaterThanOrEqual(1);
    for (const bare of [
      { method: 'POST', route: '/v1/track', status_class: '2xx' },
      { method: 'GET', route: '/t/o/:token.gif', status_class: '2xx' },
    ]) {
      expect(sample(text, 'pigeon_http_request_duration_seconds_count', bare)).toBe(1);
    }
    expect(sample(text, 'pigeon_http_request_duration_seconds_count', { route: 'unmatched' })).toBeGreaterThanOrEqual(
      1,
    );
    expect(text).not.toContain(id);
    expect(text).not.toContain('m@metrics.example');
    expect(text).not.toContain('/no/such/route');

    const limited = sample(text, 'pigeon_http_rate_limited_total') ?? 0;
    const statuses = [];
    for (let i = 0; i < 31; i++) statuses.push((await contacts.list()).status);
    expect(statuses).toContain(429);
    const refused = statuses.filter((s) => s === 429).length;
    expect(sample(await metricsText(port), 'pigeon_http_rate_limited_total')).toBe(limited + refused);
  });

  it('reads the queue, the feed and the workers from the database at each scrape', async () => {
    const text = await metricsText(port);
    for (const priority of ['transactional', 'workflow', 'campaign']) {
      expect(sample(text, 'pigeon_emails_queued', { priority })).toBeGreaterThanOrEqual(0);
    }
    expect(sample(text, 'pigeon_workers_alive')).toBe(1);
    expect(sample(text, 'pigeon_ready')).toBe(1);
    expect(sample(text, 'pigeon_database_up')).toBe(1);
    for (const consumer of ['analytics.counts', 'segments.membership', 'workflows.triggers']) {
      expect(sample(text, 'pigeon_change_feed_lag_seconds', { consumer })).toBeGreaterThanOrEqual(0);
    }
  });
});
