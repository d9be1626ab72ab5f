import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readTransportStatus } from '../src/modules/emails/transport-status.js';
import { killAllCli, startCli } from './cli.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { createTestDatabase, startTestPigeon, type TestPigeon } from './helpers.js';
import { verifiedSender } from './sending.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

/**
 * The relay goes away in the middle of a campaign for longer than the whole old retry schedule
 * (8 attempts, the wait doubling from DELIVERY_RETRY_BASE_MS: 50 ms × 127 = 6.4 s here), then
 * comes back. A transport failure uses no attempt, so nothing fails and nothing is sent twice.
 */
const OUTAGE_MS = 8000;
const FAST = {
  DELIVERY_RETRY_BASE_MS: '50',
  DELIVERY_PROBE_BASE_MS: '200',
  DELIVERY_PROBE_MAX_MS: '1000',
  CAMPAIGN_DISPATCH_INTERVAL_MS: '100',
};
const RECIPIENTS = 30;

let dns: TestDnsServer;
const dirs: string[] = [];
beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(async () => {
  await killAllCli();
  await dns?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function until<T>(read: () => Promise<T> | T, check: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out; last value ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A campaign to RECIPIENTS contacts, spread at 10 a second so the outage falls in its middle. */
async function startCampaign(pigeon: TestPigeon, tag: string) {
  const s = await verifiedSender(pigeon, dns);
  await pigeon.request('PATCH', `/users/@me/projects/${s.project.id}`, {
    headers: { cookie: s.owner.cookie },
    body: { campaignSendRate: 10 },
  });
  for (let i = 0; i < RECIPIENTS; i++) {
    const res = await pigeon.request('POST', '/contacts', { headers: s.auth, body: { email: `${tag}${i}@c.example` } });
    expect(res.status).toBe(201);
  }
  const body = {
    name: 'Outage',
    subject: 'Hi',
    body: '<p>Hello {{unsubscribeUrl}}</p>',
    from: s.from,
    audienceType: 'ALL',
  };
  const c = (await pigeon.request('POST', '/campaigns', { headers: s.auth, body })).body.data;
  expect((await pigeon.request('POST', `/campaigns/${c.id}/send`, { headers: s.auth })).status).toBe(200);
  return { s, campaignId: c.id as string };
}

/** Every recipient got the campaign exactly once; the campaign is SENT with nothing FAILED. */
async function expectAllDeliveredOnce(
  pigeon: TestPigeon,
  sink: SmtpSink,
  tag: string,
  setup: { s: { auth: Record<string, string> }; campaignId: string },
) {
  const get = async () =>
    (await pigeon.request('GET', `/campaigns/${setup.campaignId}`, { headers: setup.s.auth })).body;
  expect((await until(get, (c) => c.status !== 'SENDING', 60_000)).status).toBe('SENT');
  await new Promise((r) => setTimeout(r, 300)); // room for a duplicate to show up
  const ours = sink.messages.filter((m) => m.to.some((t) => t.startsWith(tag)));
  const addresses = ours.flatMap((m) => m.to);
  expect(addresses).toHaveLength(RECIPIENTS);
  expect(new Set(addresses).size).toBe(RECIPIENTS);
  const stats = (await pigeon.request('GET', `/campaigns/${setup.campaignId}/stats`, { headers: setup.s.auth })).body;
  expect(stats).toMatchObject({ sent: RECIPIENTS, pending: 0 });
  const { rows } = await pigeon.deps.db.pool.query(
    'SELECT status, max(attempts)::int AS attempts, count(*)::int AS n FROM emails WHERE campaign_id = $1 GROUP BY status',
    [setup.campaignId],
  );
  // No attempt was charged for the outage.
  expect(rows).toEqual([{ status: 'SENT', attempts: 1, n: RECIPIENTS }]);
}

it('a relay down longer than the old retry schedule costs no mail: the campaign waits, then every message goes once', async () => {
  const sink = await startSmtpSink();
  const pigeon = await startTestPigeon({ env: { SMTP_URL: sink.url, DNS_SERVERS: dns.address, ...FAST } });
  try {
    const setup = await startCampaign(pigeon, 'out');
    const ours = () => sink.messages.filter((m) => m.to.some((t) => t.startsWith('out'))).length;
    await until(ours, (n) => n >= 5);
    await sink.stop();
    const during = await until(
      () => readTransportStatus(pigeon.deps.db.pool, 'smtp'),
      (t) => t.state === 'down',
    );
    expect(during.downSince).not.toBeNull();
    expect(during.lastError).toMatch(/ECONNREFUSED|421|connect/i);
    const health = await pigeon.request('GET', '/health');
    expect(health.body).toMatchObject({ status: 'ok', mailTransport: { state: 'down' } });
    const security = await pigeon.request('GET', `/users/@me/projects/${setup.s.project.id}/security`, {
      headers: { cookie: setup.s.owner.cookie },
    });
    expect(security.body.mailTransport, JSON.stringify(security.body)).toMatchObject({
      state: 'down',
      downSince: during.downSince,
    });
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    const { rows: failed } = await pigeon.deps.db.pool.query(
      "SELECT count(*)::int AS n FROM emails WHERE campaign_id = $1 AND status = 'FAILED'",
      [setup.campaignId],
    );
    expect(failed[0].n).toBe(0);
    const campaign = await pigeon.request('GET', `/campaigns/${setup.campaignId}`, { headers: setup.s.auth });
    expect(campaign.body.status).toBe('SENDING');
    await sink.restart();
    await expectAllDeliveredOnce(pigeon, sink, 'out', setup);
    expect((await readTransportStatus(pigeon.deps.db.pool, 'smtp')).state).toBe('up');
  } finally {
    await pigeon.stop();
    await sink.close();
  }
}, 120_000);

it('a worker killed -9 during the outage changes nothing in the result', async () => {
  const sink = await startSmtpSink();
  const databaseUrl = await createTestDatabase();
  const env = { SMTP_URL: sink.url, DNS_SERVERS: dns.address, ...FAST };
  const api = await startTestPigeon({ databaseUrl, role: 'api', env });
  try {
    const dir = mkdtempSync(join(tmpdir(), 'pigeon-outage-'));
    chmodSync(dir, 0o755);
    dirs.push(dir);
    const workerEnv = { ...env, PIGEON_DATA_DIR: dir, DATABASE_URL: databaseUrl, DELIVERY_CLAIM_TIMEOUT_SECONDS: '2' };
    const first = startCli(['worker'], workerEnv);
    await first.ready;
    const setup = await startCampaign(api, 'kill');
    const ours = () => sink.messages.filter((m) => m.to.some((t) => t.startsWith('kill'))).length;
    await until(ours, (n) => n >= 5);
    await sink.stop();
    await until(
      () => readTransportStatus(api.deps.db.pool, 'smtp'),
      (t) => t.state === 'down',
    );
    await new Promise((r) => setTimeout(r, OUTAGE_MS / 2));
    first.child.kill('SIGKILL');
    await first.exited;
    const second = startCli(['worker'], workerEnv);
    await second.ready;
    await new Promise((r) => setTimeout(r, OUTAGE_MS / 2));
    await sink.restart();
    await expectAllDeliveredOnce(api, sink, 'kill', setup);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  } finally {
    await api.stop();
    await sink.close();
  }
}, 120_000);
