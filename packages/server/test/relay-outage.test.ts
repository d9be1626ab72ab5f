import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { queryRows, sql } from '../src/db/query.js';
import { readTransportStatus } from '../src/mail/transport-status.js';
import { api, bodyOf } from './api.js';
import { addresses, campaignToAll } from './campaigns.js';
import { killAllCli, startCli } from './cli.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { emailStatus, ensureEmailsPartition, idAt, insertEmailRow, monthStart } from './fixtures/email-states.js';
import { createTestDatabase, expectEnvelope, startTestPigeon, type TestPigeon } from './helpers.js';
import { verifiedSender } from './sending.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';
import { until as sharedUntil } from './until.js';

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

/** The shared `until`, with the longer wait an outage needs. */
const until = <T>(read: () => Promise<T> | T, check: (v: T) => boolean, timeoutMs = 30_000) =>
  sharedUntil(read, check, timeoutMs);

/** A campaign to RECIPIENTS contacts, spread at 10 a second so the outage falls in its middle. */
async function startCampaign(pigeon: TestPigeon, tag: string) {
  const run = await campaignToAll(pigeon, await verifiedSender(pigeon, dns), addresses(tag, RECIPIENTS, 'c.example'), {
    sendRate: 10,
  });
  await run.send();
  return run;
}

/** Every recipient got the campaign exactly once; the campaign is SENT with nothing FAILED. */
async function expectAllDeliveredOnce(
  pigeon: TestPigeon,
  sink: SmtpSink,
  tag: string,
  run: Awaited<ReturnType<typeof startCampaign>>,
) {
  expect((await run.finished(60_000)).status).toBe('SENT');
  await new Promise((r) => setTimeout(r, 300)); // room for a duplicate to show up
  const ours = sink.messages.filter((m) => m.to.some((t) => t.startsWith(tag)));
  const received = ours.flatMap((m) => m.to);
  expect(received).toHaveLength(RECIPIENTS);
  expect(new Set(received).size).toBe(RECIPIENTS);
  const stats = (await run.client.campaigns.stats({ params: run.params })).body;
  expect(stats).toMatchObject({ sent: RECIPIENTS, pending: 0 });
  const rows = await queryRows(
    pigeon.deps.db.pool,
    sql`SELECT status, max(attempts)::int AS attempts, count(*)::int AS n FROM emails WHERE campaign_id = ${run.campaign.id} GROUP BY status`,
  );
  // No attempt was charged for the outage.
  expect(rows).toEqual([{ status: 'SENT', attempts: 1, n: RECIPIENTS }]);
}

it('a relay down longer than the old retry schedule costs no mail: the campaign waits, then every message goes once', async () => {
  const sink = await startSmtpSink();
  const pigeon = await startTestPigeon({
    // The owners' notice after 3 s of outage (it cannot go through the dead relay: it goes when it is back).
    env: { SMTP_URL: sink.url, DNS_SERVERS: dns.address, ...FAST, DELIVERY_OUTAGE_NOTIFY_MINUTES: '0.05' },
  });
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
    const health = await api(pigeon).system.health();
    // Anyone may read /health: the relay's state, never its error text (which names its address).
    expect(health.body).toMatchObject({ status: 'ok', mailTransport: { state: 'down', lastError: null } });
    const security = await api(pigeon, { cookie: setup.sender.owner.cookie }).users.security({
      params: { id: setup.sender.project.id },
    });
    expect(bodyOf(security, 200).mailTransport, JSON.stringify(security.body)).toMatchObject({
      state: 'down',
      downSince: during.downSince,
      lastError: expect.stringMatching(/ECONNREFUSED|421|connect/i),
    });
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    const failed = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT count(*)::int AS n FROM emails WHERE campaign_id = ${setup.campaign.id} AND status = 'FAILED'`,
    );
    expect(failed[0]?.n).toBe(0);
    const campaign = await setup.client.campaigns.get({ params: setup.params });
    expect(bodyOf(campaign, 200).status).toBe('SENDING');
    await sink.restart();
    await expectAllDeliveredOnce(pigeon, sink, 'out', setup);
    expect((await readTransportStatus(pigeon.deps.db.pool, 'smtp')).state).toBe('up');
    const owner = setup.sender.owner.user.email as string;
    const notices = sink.messages.filter((m) => m.to.includes(owner) && /relay was down/.test(m.raw));
    expect(notices).toHaveLength(1);
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
    const workerEnv = { ...env, PIGEON_DATA_DIR: dir, DATABASE_URL: databaseUrl, DELIVERY_CLAIM_TIMEOUT_SECONDS: '5' };
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

it('a message’s own 4xx retries within its lifetime, then FAILED; 5xx bounces; neither pauses the transport; requeue refuses what sending refuses', async () => {
  const sink = await startSmtpSink();
  const lifetimeMs = 1800;
  const pigeon = await startTestPigeon({
    env: {
      SMTP_URL: sink.url,
      DNS_SERVERS: dns.address,
      ...FAST,
      DELIVERY_RETRY_BASE_MS: '100',
      DELIVERY_LIFETIME_HOURS: String(lifetimeMs / 3_600_000),
    },
  });
  const db = pigeon.deps.db.pool;
  try {
    const [a, b, c] = ['rq-a@c.example', 'rq-b@c.example', 'rq-c@c.example'];
    for (const email of [a, b, c]) sink.failFor(email, 451);
    const s = await verifiedSender(pigeon, dns);
    const run = await campaignToAll(pigeon, s, [a, b, c]);
    const { client, params } = run;
    const campaignId = run.campaign.id;
    await run.send();
    expect((await run.finished(30_000)).status).toBe('SENT');
    const failed = await queryRows(
      db,
      sql`SELECT status, attempts, last_error, next_attempt_at <= created_at + make_interval(secs => ${lifetimeMs / 1000}) AS within
       FROM emails WHERE campaign_id = ${campaignId}`,
    );
    expect(failed).toHaveLength(3);
    for (const row of failed) {
      expect(row).toMatchObject({ status: 'FAILED', within: true });
      expect(row.attempts).toBeGreaterThan(2); // tried again with backoff, each try charged
      expect(row.last_error).toMatch(/451/);
    }
    expect((await readTransportStatus(db, 'smtp')).state).toBe('up');

    // A 5xx about the recipient is the message's own final failure: a bounce, which suppresses a.
    sink.failFor(a, 550);
    const bounced = await client.emails.send({ body: { to: a, from: s.from, subject: 'bounce', body: '<p>b</p>' } });
    const bouncedId = bodyOf(bounced, 200).data.emails[0]?.email;
    const status = async () =>
      (await queryRows(db, sql`SELECT status, attempts FROM emails WHERE id = ${bouncedId}`))[0];
    expect(await until(status, (r) => r?.status !== 'QUEUED' && r?.status !== 'SENDING')).toEqual({
      status: 'BOUNCED',
      attempts: 1,
    });
    expect((await readTransportStatus(db, 'smtp')).state).toBe('up');
    // b unsubscribes; the relay takes every address again.
    await client.contacts.create({ body: { email: b, subscribed: false } });
    for (const email of [a, b, c]) sink.failFor(email, null);

    const requeued = await client.campaigns.requeueFailed({ params });
    expect(requeued.body).toMatchObject({
      success: true,
      data: { requeued: 1, refused: { suppressed: 1, unsubscribed: 1 } },
    });
    await run.finished(30_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(sink.messages.flatMap((m) => m.to).filter((t) => t.startsWith('rq-'))).toEqual([c]);
    const rows = await queryRows(
      db,
      sql`SELECT to_email, status FROM emails WHERE campaign_id = ${campaignId} ORDER BY to_email`,
    );
    expect(rows).toEqual([
      { to_email: a, status: 'FAILED' },
      { to_email: b, status: 'FAILED' },
      { to_email: c, status: 'SENT' },
    ]);
    // Nothing left to requeue: a second call changes nothing; a DRAFT has nothing to requeue.
    const again = await client.campaigns.requeueFailed({ params });
    expect(bodyOf(again, 200).data).toEqual({ requeued: 0, refused: { suppressed: 1, unsubscribed: 1 } });
    const draft = bodyOf(await client.campaigns.create({ body: run.body }), 201).data.id;
    expectEnvelope(await client.campaigns.requeueFailed({ params: { id: draft } }), 409, 'CONFLICT');

    // The project-wide requeue: transactional mail that outlived its lifetime goes once the relay takes it.
    const d = 'rq-d@c.example';
    sink.failFor(d, 451);
    const sent = await client.emails.send({ body: { to: d, from: s.from, subject: 'later', body: '<p>l</p>' } });
    const dId = bodyOf(sent, 200).data.emails[0]?.email;
    const dStatus = async () => (await queryRows(db, sql`SELECT status FROM emails WHERE id = ${dId}`))[0]?.status;
    expect(await until(dStatus, (v) => v === 'FAILED')).toBe('FAILED');
    sink.failFor(d, null);
    const project = await client.emails.requeueFailed();
    // The campaign's two refused messages are counted again; d goes.
    expect(bodyOf(project, 200).data).toEqual({ requeued: 1, refused: { suppressed: 1, unsubscribed: 1 } });
    expect(await until(dStatus, (v) => v === 'SENT')).toBe('SENT');

    // FAILED mail from months ago (its partition is below the workers' queue window) goes too: the
    // requeue's NOTIFY tells them to look for the window's floor again, not in a minute.
    const months = monthStart(4);
    await ensureEmailsPartition(db, months);
    const oldId = idAt(months + 86_400_000);
    await insertEmailRow(db, {
      id: oldId,
      projectId: s.project.id,
      status: 'FAILED',
      from: s.from,
      to: 'rq-old@c.example',
    });
    const oldStatus = () => emailStatus(db, oldId);
    expect(bodyOf(await client.emails.requeueFailed(), 200).data.requeued).toBe(1);
    expect(await until(oldStatus, (v) => v === 'SENT', 20_000)).toBe('SENT');
    expect(sink.messages.flatMap((m) => m.to)).toContain('rq-old@c.example');

    const other = await verifiedSender(pigeon, dns);
    const foreign = await api(pigeon, other.auth).campaigns.requeueFailed({ params });
    expectEnvelope(foreign, 404, 'NOT_FOUND');
  } finally {
    await pigeon.stop();
    await sink.close();
  }
}, 120_000);
