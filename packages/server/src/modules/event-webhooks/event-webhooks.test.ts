import { type contract, LIST_TOTAL_CAP } from '@pigeon/contract';
import type { ClientInferRequest } from '@ts-rest/core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../../../sdk/dist/index.js';
import { decodeQuotedPrintable, newProject, signUp } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { startDnsServer, type TestDnsServer } from '../../../test/dns-server.js';
import { insertEventsFrom } from '../../../test/fixtures/event-log.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { hrefs, pixelUrl, receivedMessage } from '../../../test/mail.js';
import { verifiedSender } from '../../../test/sending.js';
import { type SmtpSink, startSmtpSink } from '../../../test/smtp-sink.js';
import { type Received, startTarget, type Target } from '../../../test/webhook-targets.js';
import { track, until } from '../../../test/workflows.js';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction } from '../../db/sql.js';
import { insertJob, type JobRow, recordBatch } from '../background-jobs/service.js';
import { recordDeliveryFeedback } from '../deliverability/feedback.js';
import { recoverDeliveries } from './recovery.js';
import { MAX_DELIVERY_ATTEMPTS } from './schedule.js';

/** The clock Pigeon's webhook workers read: tests move it forward instead of waiting hours. */
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);
const advance = (ms: number) => {
  offsetMs += ms;
};
const HOUR = 3_600_000;

let pigeon: TestPigeon;
let sink: SmtpSink;
let dns: TestDnsServer;
const targets: Target[] = [];

beforeAll(async () => {
  [sink, dns] = await Promise.all([startSmtpSink(), startDnsServer()]);
  pigeon = await startTestPigeon({
    env: {
      SMTP_URL: sink.url,
      DNS_SERVERS: dns.address,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_POLL_MS: '50',
      CHANGE_FEED_POLL_MS: '50',
    },
    clock,
  });
});
afterAll(async () => {
  await pigeon?.stop();
  await Promise.all([sink?.close(), dns?.close(), ...targets.map((t) => t.close())]);
});

async function target(handler?: Parameters<typeof startTarget>[0]): Promise<Target> {
  const t = await startTarget(handler);
  targets.push(t);
  return t;
}

type Auth = Record<string, string>;
type EndpointInput = ClientInferRequest<typeof contract.webhookEndpoints.create>['body'];

async function createEndpoint(auth: Auth, body: EndpointInput, on: TestPigeon = pigeon) {
  const res = await api(on, auth).webhookEndpoints.create({ body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return bodyOf(res, 201);
}

const typeOf = (r: Received) => JSON.parse(r.body).type as string;
const received = (t: Target, type: string) =>
  until(
    () => t.received.filter((r) => typeOf(r) === type),
    (l) => l.length > 0,
  );

async function deliveriesOf(auth: Auth, endpointId: string) {
  const res = await api(pigeon, auth).webhookEndpoints.deliveries({
    params: { id: endpointId },
    query: { limit: 100 },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return bodyOf(res, 200).data;
}

/**
 * `count` copies of a delivery (its endpoint, type and payload) as a long history leaves them:
 * `status`, webhook-ids `prefix` + 1…count, created `offset` after the original plus 1 µs apart.
 */
function copiesOf(deliveryId: string, count: number, status: string, prefix: string, offset = '0') {
  return queryRows(
    pigeon.deps.db.pool,
    sql`INSERT INTO webhook_messages (id, webhook_id, project_id, endpoint_id, event_type, payload, status, attempts, created_at)
        SELECT uuidv7_compat(), ${prefix} || g, m.project_id, m.endpoint_id, m.event_type, m.payload, ${status},
               ${MAX_DELIVERY_ATTEMPTS}::int, m.created_at + ${offset}::interval + g * interval '1 microsecond'
        FROM webhook_messages m, generate_series(1, ${count}::int) g WHERE m.id = ${deliveryId}::uuid`,
  );
}

describe('event webhooks', () => {
  it('delivers every event type, signed so that the SDK helper (and the reference library) verifies it', async () => {
    const sender = await verifiedSender(pigeon, dns);
    const hook = await target();
    const endpoint = await createEndpoint(sender.auth, { url: `${hook.origin}/hooks`, eventTypes: ['*'] });
    const client = api(pigeon, sender.auth);
    const created = await client.segments.create({
      body: {
        name: 'Pro',
        trackMembership: true,
        condition: { logic: 'AND', groups: [{ filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }] }] },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const segment = bodyOf(created, 201);

    const to = `ada-${process.pid}@example.com`;
    const sent = await client.emails.send({
      body: {
        to,
        from: sender.from,
        subject: 'Hello',
        body: '<p><a href="https://example.com/start">Start</a></p>',
        tracking: true,
        subscribed: true,
      },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const emailId = bodyOf(sent, 200).data.emails[0]?.email ?? 'nothing queued';
    const message = await receivedMessage(sink, `<${emailId}@${sender.domain}>`);
    await received(hook, 'email.sent');
    expect((await fetch(pixelUrl(message) ?? '')).status).toBe(200);
    const click = hrefs(message).find((h) => h.includes('/t/c/')) ?? '';
    expect((await fetch(click, { redirect: 'manual' })).status).toBe(302);
    await received(hook, 'email.click');
    await recordDeliveryFeedback(pigeon.deps, emailId, { kind: 'complaint', feedbackType: 'abuse', source: 'arf' });
    await recordDeliveryFeedback(pigeon.deps, emailId, {
      kind: 'bounce',
      bounceType: 'hard',
      diagnostic: '550 5.1.1 user unknown',
      source: 'dsn',
    });
    await track(pigeon, sender.auth, 'grace@example.com', 'order.created', { total: 42 }, false);
    await track(pigeon, sender.auth, 'grace@example.com', 'order.paid', { plan: 'pro' }, true); // subscribes her

    const types = [
      'email.sent',
      'email.delivery',
      'email.open',
      'email.click',
      'email.complaint',
      'email.bounce',
      'contact.subscribed',
      'contact.unsubscribed',
      `segment.${segment.slug}.entry`,
      'order.created',
    ];
    const seen = await until(
      () => hook.received.map(typeOf),
      (seen) => types.every((t) => seen.includes(t)),
    );
    expect(types.filter((t) => !seen.includes(t))).toEqual([]);
    const reference = new Webhook(endpoint.secret);
    const events = [];
    for (const r of hook.received) {
      const event = await verifyWebhook<'order.created'>(r.body, r.headers, endpoint.secret);
      reference.verify(r.body, r.headers as Record<string, string>);
      expect(r.headers['content-type']).toBe('application/json');
      events.push(event);
    }
    const byType = new Map(events.map((e) => [e.type, e]));
    expect(byType.get('email.click')?.data).toMatchObject({
      emailId,
      to,
      from: sender.from,
      subject: 'Hello',
      link: 'https://example.com/start',
      contact: { email: to },
    });
    expect(byType.get('email.bounce')?.data).toMatchObject({ bounceType: 'hard', reason: '550 5.1.1 user unknown' });
    expect(byType.get('email.complaint')?.data).toMatchObject({ feedbackType: 'abuse' });
    expect(byType.get('contact.unsubscribed')?.data).toMatchObject({ contact: { email: to, subscribed: false } });
    expect(byType.get(`segment.${segment.slug}.entry`)?.data).toMatchObject({
      contact: { email: 'grace@example.com' },
      segment: { id: segment.id, slug: segment.slug, name: 'Pro' },
    });
    expect(byType.get('order.created')?.data).toMatchObject({
      data: { total: 42 },
      contact: { email: 'grace@example.com' },
    });

    // One delivery per event, each with its own webhook-id.
    const ids = hook.received.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(ids.length);

    // A tampered body or another secret is refused with a typed error.
    const first = hook.received[0] as Received;
    await expect(verifyWebhook(`${first.body} `, first.headers, endpoint.secret)).rejects.toMatchObject({
      reason: 'INVALID_SIGNATURE',
    });
    const other = await createEndpoint(sender.auth, { url: `${hook.origin}/other`, eventTypes: ['order.*'] });
    await expect(verifyWebhook(first.body, first.headers, other.secret)).rejects.toBeInstanceOf(
      WebhookVerificationError,
    );

    // The email resource tells the same story.
    const detail = await client.sentEmails.get({ params: { id: emailId } });
    expect(detail.status, JSON.stringify(detail.body)).toBe(200);
    expect(detail.body).toMatchObject({
      id: emailId,
      to,
      from: sender.from,
      subject: 'Hello',
      status: 'BOUNCED',
      opens: 1,
      clicks: 1,
    });
    const timeline = bodyOf(detail, 200).timeline.map((t) => t.type);
    expect(timeline).toEqual([
      'email.queued',
      'email.sent',
      'email.delivery',
      'email.open',
      'email.click',
      'email.complaint',
      'contact.unsubscribed', // the complaint unsubscribed the contact (its event names the email)
      'email.bounce',
    ]);
  });

  it('retries with the same webhook-id on the Svix schedule, disables after 5 days of failures and tells the owners', async () => {
    const setup = await newProject(pigeon);
    let answer = 500;
    const hook = await target((_req, res) => {
      res.statusCode = answer;
      res.end(answer === 200 ? 'ok' : 'nope, try later');
    });
    const endpoint = await createEndpoint(setup.auth, { url: `${hook.origin}/flaky`, eventTypes: ['order.*'] });
    await track(pigeon, setup.auth, 'retry@example.com', 'order.created');
    await until(
      () => hook.received.length,
      (n) => n >= 1,
    );
    const [first] = await until(
      () => deliveriesOf(setup.auth, endpoint.id),
      (d) => d[0]?.attemptCount === 1 && d[0].status === 'PENDING',
    );
    expect(first?.attempts[0]).toMatchObject({
      statusCode: 500,
      response: 'nope, try later',
      error: 'HTTP 500 Internal Server Error',
    });
    const wait = Date.parse(first?.nextAttemptAt ?? '') - Date.parse(first?.attempts[0]?.at ?? '');
    expect(wait).toBeGreaterThanOrEqual(4_500); // 5 s ± 10%
    expect(wait).toBeLessThanOrEqual(5_500);

    advance(6_000);
    await until(
      () => hook.received.length,
      (n) => n >= 2,
    );
    const [second] = await until(
      () => deliveriesOf(setup.auth, endpoint.id),
      (d) => d[0]?.attemptCount === 2 && d[0].status === 'PENDING',
    );
    const secondWait = Date.parse(second?.nextAttemptAt ?? '') - Date.parse(second?.attempts[0]?.at ?? '');
    expect(secondWait).toBeGreaterThanOrEqual(270_000); // 5 min ± 10%
    expect(secondWait).toBeLessThanOrEqual(330_000);
    expect(new Set(hook.received.map((r) => r.headers['webhook-id'])).size).toBe(1);

    // Five days later the next failure disables the endpoint; its owner gets an email.
    advance(5 * 24 * HOUR + 60_000);
    const disabled = await until(
      async () => bodyOf(await api(pigeon, setup.auth).webhookEndpoints.get({ params: { id: endpoint.id } }), 200),
      (e) => e.enabled === false,
    );
    expect(disabled).toMatchObject({ enabled: false, disabledReason: expect.stringContaining('5 days') });
    expect(hook.received).toHaveLength(3);
    const toOwner = () =>
      sink.messages.filter((m) => m.to.includes(setup.owner.user.email) && m.raw.includes('webhook endpoint'));
    const [mail] = await until(toOwner, (m) => m.length > 0);
    expect(decodeQuotedPrintable(mail?.raw ?? '')).toContain(`${hook.origin}/flaky`);

    // Disabled: new events are not queued for it, and the pending retry waits.
    await track(pigeon, setup.auth, 'retry@example.com', 'order.paid');
    advance(HOUR);
    await new Promise((r) => setTimeout(r, 500));
    expect(hook.received).toHaveLength(3);
    expect(await deliveriesOf(setup.auth, endpoint.id)).toHaveLength(1);

    // Enabled again and fixed: the pending delivery goes through, still with the same webhook-id.
    answer = 200;
    const enabled = await api(pigeon, setup.auth).webhookEndpoints.update({
      params: { id: endpoint.id },
      body: { enabled: true },
    });
    expect(enabled.body).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
    const [done] = await until(
      () => deliveriesOf(setup.auth, endpoint.id),
      (d) => d[0]?.status === 'SUCCEEDED',
    );
    expect(done?.attemptCount).toBe(4);
    expect(new Set(hook.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
  });

  it('sends test events, replays a delivery with its id, and signs with both secrets during a rotation', async () => {
    const setup = await newProject(pigeon);
    const hook = await target();
    const endpoint = await createEndpoint(setup.auth, { url: `${hook.origin}/t`, eventTypes: ['email.bounce'] });
    const client = api(pigeon, setup.auth);
    const params = { id: endpoint.id };
    const test = await client.webhookEndpoints.test({ params, body: {} });
    expect(test.status, JSON.stringify(test.body)).toBe(202);
    const testDelivery = bodyOf(test, 202);
    const [arrived] = await received(hook, 'webhook.test');
    const event = await verifyWebhook(arrived?.body ?? '', arrived?.headers ?? {}, endpoint.secret, { now: clock });
    expect(event).toMatchObject({ type: 'webhook.test', data: { endpointId: endpoint.id } });

    await until(
      () => deliveriesOf(setup.auth, endpoint.id),
      (d) => d[0]?.status === 'SUCCEEDED',
    );
    const replay = await client.webhookEndpoints.replay({
      params: { id: endpoint.id, deliveryId: testDelivery.id },
      body: {},
    });
    expect(replay.status, JSON.stringify(replay.body)).toBe(202);
    await until(
      () => hook.received.length,
      (n) => n >= 2,
    );
    expect(hook.received[1]?.headers['webhook-id']).toBe(testDelivery.webhookId);
    expect(hook.received[1]?.body).toBe(arrived?.body);
    const [replayed] = await until(
      () => deliveriesOf(setup.auth, endpoint.id),
      (d) => d[0]?.attempts.length === 2 && d[0].status === 'SUCCEEDED',
    );
    expect(replayed?.attempts.map((a) => a.trigger)).toEqual(['REPLAY', 'SCHEDULED']);

    const rotation = await client.webhookEndpoints.rotateSecret({ params, body: { overlapHours: 24 } });
    expect(rotation.status, JSON.stringify(rotation.body)).toBe(200);
    const rotated = bodyOf(rotation, 200);
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect(rotated.previousSecretExpiresAt).not.toBeNull();
    await client.webhookEndpoints.test({ params, body: {} });
    const during = await until(() => hook.received[2], Boolean);
    expect(String(during?.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [endpoint.secret, rotated.secret]) {
      await verifyWebhook(during?.body ?? '', during?.headers ?? {}, secret, { now: clock });
    }

    advance(25 * HOUR);
    await client.webhookEndpoints.test({ params, body: {} });
    const after = await until(() => hook.received[3], Boolean);
    expect(String(after?.headers['webhook-signature']).split(' ')).toHaveLength(1);
    await verifyWebhook(after?.body ?? '', after?.headers ?? {}, rotated.secret, { now: clock });
    await expect(
      verifyWebhook(after?.body ?? '', after?.headers ?? {}, endpoint.secret, { now: clock }),
    ).rejects.toMatchObject({
      reason: 'INVALID_SIGNATURE',
    });
    // The SDK refuses a timestamp out of tolerance (the moved clock is 25 h ahead of the real one).
    await expect(verifyWebhook(after?.body ?? '', after?.headers ?? {}, rotated.secret)).rejects.toMatchObject({
      reason: 'TIMESTAMP_OUT_OF_TOLERANCE',
    });
  });

  it('recovers the FAILED deliveries of a time range: each sent once more with its webhook-id, in batches', async () => {
    const setup = await newProject(pigeon);
    let answer = 500;
    const hook = await target((_req, res) => {
      res.statusCode = answer;
      res.end();
    });
    const endpoint = await createEndpoint(setup.auth, { url: `${hook.origin}/down`, eventTypes: ['outage.*'] });
    const client = api(pigeon, setup.auth).webhookEndpoints;
    const params = { id: endpoint.id };
    // One delivery through its whole schedule while the endpoint is down: FAILED after the last attempt.
    await track(pigeon, setup.auth, 'outage@example.com', 'outage.started');
    for (let attempt = 1; attempt < MAX_DELIVERY_ATTEMPTS; attempt++) {
      const [pending] = await until(
        () => deliveriesOf(setup.auth, endpoint.id),
        (d) => d[0]?.attemptCount === attempt && d[0].status === 'PENDING',
      );
      advance(Date.parse(pending?.nextAttemptAt ?? '') - clock().getTime() + 1_000);
    }
    const [failed] = await until(
      () => deliveriesOf(setup.auth, endpoint.id),
      (d) => d[0]?.status === 'FAILED',
    );
    if (!failed) throw new Error('no FAILED delivery');
    // A long outage's worth in the range (FAILED, and SUCCEEDED ones to pass over), and FAILED ones
    // before it, which stay as they are.
    await copiesOf(failed.id, 2_400, 'FAILED', 'msg_down');
    await copiesOf(failed.id, 100, 'SUCCEEDED', 'msg_fine');
    await copiesOf(failed.id, 50, 'FAILED', 'msg_older', '-1 hour');
    const range = { after: failed.createdAt, before: new Date(Date.parse(failed.createdAt) + 3_600_000).toISOString() };
    const recoverAll = async () => {
      const accepted = await client.recover({ params, body: range });
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
      const { jobId } = bodyOf(accepted, 202);
      return until(
        async () => bodyOf(await client.recovery({ params: { id: endpoint.id, jobId } }), 200),
        (job) => job.status === 'completed' || job.status === 'failed',
      );
    };
    const statusCounts = async () => {
      const rows = await queryRows<{ status: string; n: number }>(
        pigeon.deps.db.pool,
        sql`SELECT status, count(*)::int AS n FROM webhook_messages WHERE endpoint_id = ${endpoint.id}::uuid
            AND webhook_id NOT LIKE 'msg_older%' GROUP BY status`,
      );
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    };
    const counts = { total: 2_501, processed: 2_501, updated: 2_401, skipped: 100, progress: 100 };

    // Still down: every FAILED one is tried once more and fails again; the job ends all the same.
    const before = hook.received.length;
    expect(await recoverAll()).toMatchObject({ kind: 'recover_deliveries', status: 'completed', ...counts });
    await until(statusCounts, (c) => c.FAILED === 2_401 && c.SUCCEEDED === 100);
    expect(hook.received.length - before).toBe(2_401);

    // Back up: recovered again, each once, with the webhook-id it always had.
    answer = 200;
    const arrived = hook.received.length;
    expect(await recoverAll()).toMatchObject({ status: 'completed', ...counts });
    await until(statusCounts, (c) => c.SUCCEEDED === 2_501);
    const resent = hook.received.slice(arrived).map((r) => String(r.headers['webhook-id']));
    expect(resent).toHaveLength(2_401);
    expect(new Set(resent).size).toBe(2_401);
    expect(resent).toContain(failed.webhookId);
    expect(resent.filter((id) => id.startsWith('msg_down'))).toHaveLength(2_400);
    const recovered = bodyOf(await client.delivery({ params: { id: endpoint.id, deliveryId: failed.id } }), 200);
    expect(recovered).toMatchObject({ status: 'SUCCEEDED', attemptCount: MAX_DELIVERY_ATTEMPTS + 2 });
    expect(recovered.attempts.slice(0, 3).map((a) => a.trigger)).toEqual(['REPLAY', 'REPLAY', 'SCHEDULED']);
    const [older] = await queryRows<{ n: number }>(
      pigeon.deps.db.pool,
      sql`SELECT count(*)::int AS n FROM webhook_messages WHERE webhook_id LIKE 'msg_older%' AND status = 'FAILED'`,
    );
    expect(older?.n).toBe(50);

    // Bad ranges are 422 naming the field, a disabled endpoint 409, another endpoint's job 404.
    const backwards = await client.recover({ params, body: { after: range.before, before: range.after } });
    expect(expectEnvelope(backwards, 422, 'VALIDATION_ERROR').errors?.map((e) => e.field)).toContain('before');
    const notATime = await client.recover({ params, body: { after: 'yesterday' } });
    expect(expectEnvelope(notATime, 422, 'VALIDATION_ERROR').errors?.map((e) => e.field)).toContain('after');
    await client.update({ params, body: { enabled: false } });
    expectEnvelope(await client.recover({ params, body: range }), 409, 'CONFLICT');
    const other = await createEndpoint(setup.auth, { url: `${hook.origin}/other`, eventTypes: ['*'] });
    const accepted = bodyOf(await client.recover({ params: { id: other.id }, body: range }), 202);
    expectEnvelope(await client.recovery({ params: { id: endpoint.id, jobId: accepted.jobId } }), 404, 'NOT_FOUND');
  });

  it('a recovery stopped after a committed batch resumes after it: no delivery is looked at twice', async () => {
    const setup = await newProject(pigeon);
    const hook = await target();
    const endpoint = await createEndpoint(setup.auth, { url: `${hook.origin}/resume`, eventTypes: ['nothing.*'] });
    const client = api(pigeon, setup.auth).webhookEndpoints;
    const probe = bodyOf(await client.test({ params: { id: endpoint.id }, body: {} }), 202);
    await until(
      () => deliveriesOf(setup.auth, endpoint.id),
      (d) => d[0]?.status === 'SUCCEEDED',
    );
    const pool = pigeon.deps.db.pool;
    await copiesOf(probe.id, 30, 'FAILED', 'msg_resume');
    // What a crash after the first batch leaves: its counters and where it stopped, committed together
    // (here after the probe and the first 10 failed ones, which a real batch would have made PENDING).
    const after = probe.createdAt;
    const input = { endpointId: endpoint.id, after, before: new Date(Date.parse(after) + 60_000).toISOString() };
    const jobId = await insertJob(pool, setup.project.id, 'recover_deliveries', { ...input, askedAt: after });
    const [stop] = await queryRows<{ createdAt: string; id: string }>(
      pool,
      sql`SELECT created_at::text AS "createdAt", id FROM webhook_messages WHERE endpoint_id = ${endpoint.id}::uuid
          ORDER BY created_at, id OFFSET 10 LIMIT 1`,
    );
    await inTransaction(pool, (c) =>
      recordBatch(c, jobId, { processed: 11, updated: 10, skipped: 1, resumeFrom: stop ?? {} }),
    );
    const [job] = await queryRows<JobRow>(pool, sql`SELECT * FROM background_jobs WHERE id = ${jobId}::uuid`);
    if (!job) throw new Error('no job row');
    await recoverDeliveries({ pool, job, logger: pigeon.deps.logger, heartbeat: async () => {} });

    expect(bodyOf(await client.recovery({ params: { id: endpoint.id, jobId } }), 200)).toMatchObject({
      total: 31,
      processed: 31,
      updated: 30,
      skipped: 1,
    });
    const resent = await until(
      () => hook.received.filter((r) => String(r.headers['webhook-id']).startsWith('msg_resume')),
      (r) => r.length >= 20,
    );
    expect(resent.map((r) => r.headers['webhook-id']).sort()).toEqual(
      Array.from({ length: 20 }, (_, i) => `msg_resume${i + 11}`).sort(),
    );
    const [left] = await queryRows<{ n: number }>(
      pool,
      sql`SELECT count(*)::int AS n FROM webhook_messages WHERE endpoint_id = ${endpoint.id}::uuid AND status = 'FAILED'`,
    );
    expect(left?.n).toBe(10);
  });

  it('an endpoint that never answers holds only its own share: another endpoint gets every event meanwhile', async () => {
    const { auth, project } = await newProject(pigeon);
    const silent = await startTarget(() => {}); // reads the request, never answers
    const quick = await target();
    try {
      const stuck = await createEndpoint(auth, { url: `${silent.origin}/s`, eventTypes: ['load.*'] });
      await createEndpoint(auth, { url: `${quick.origin}/q`, eventTypes: ['load.*'] });
      // One burst, recorded in one statement (as a grouped track writes it): one feed batch, so
      // its deliveries share one due time and only their ids order them.
      const events = 150;
      await track(pigeon, auth, 'load@example.com', 'load.start');
      await insertEventsFrom(
        pigeon.deps.db.pool,
        sql`SELECT uuidv7_compat(), ${project.id}::uuid, c.id, 'load.tick', jsonb_build_object('n', i), now()
            FROM contacts c, generate_series(1, ${events}::int - 1) AS i WHERE c.project_id = ${project.id}`,
      );
      await until(
        () => quick.received.length,
        (n) => n === events,
      );
      expect(quick.received).toHaveLength(events);
      // WEBHOOK_ENDPOINT_CONCURRENCY (16): the silent one has at most that many requests open,
      // and at most 4 × 16 deliveries claimed (the rest wait in the database for whoever can send).
      expect(silent.received.length).toBeGreaterThan(0);
      expect(silent.received.length).toBeLessThanOrEqual(16);
      const rows = await queryRows(
        pigeon.deps.db.pool,
        sql`SELECT count(*)::int AS n FROM webhook_messages WHERE endpoint_id = ${stuck.id} AND status = 'SENDING'`,
      );
      expect(rows[0]?.n).toBeLessThanOrEqual(64);
    } finally {
      await silent.close();
    }
  });

  it('pages deliveries and keeps endpoints and emails to their project', async () => {
    const mine = await newProject(pigeon);
    const theirs = await newProject(pigeon);
    const hook = await target();
    const endpoint = await createEndpoint(mine.auth, { url: `${hook.origin}/p`, eventTypes: ['signup'] });
    for (let i = 0; i < 3; i++) await track(pigeon, mine.auth, `p${i}@example.com`, 'signup');
    await until(
      () => deliveriesOf(mine.auth, endpoint.id),
      (d) => d.length === 3,
    );
    const params = { id: endpoint.id };
    const page1 = bodyOf(
      await api(pigeon, mine.auth).webhookEndpoints.deliveries({ params, query: { limit: 2 } }),
      200,
    );
    expect(page1).toMatchObject({ hasMore: true, total: 3, totalCapped: false });
    const page2 = bodyOf(
      await api(pigeon, mine.auth).webhookEndpoints.deliveries({
        params,
        query: { limit: 2, cursor: page1.cursor ?? 'no cursor' },
      }),
      200,
    );
    expect(page2).toMatchObject({ hasMore: false, cursor: null });
    const ids = [...page1.data, ...page2.data].map((d) => d.id);
    expect(new Set(ids).size).toBe(3);
    // A long history: the first page counts up to LIST_TOTAL_CAP and says it stopped there.
    await copiesOf(ids[0] ?? 'none listed', LIST_TOTAL_CAP, 'SUCCEEDED', 'msg_bulk', '-1 hour');
    const long = api(pigeon, mine.auth).webhookEndpoints;
    expect(bodyOf(await long.deliveries({ params, query: { limit: 1 } }), 200)).toMatchObject({
      total: LIST_TOTAL_CAP,
      totalCapped: true,
    });
    expect(bodyOf(await long.deliveries({ params, query: { status: 'FAILED' } }), 200)).toMatchObject({
      total: 0,
      totalCapped: false,
    });

    const delivery = { id: endpoint.id, deliveryId: ids[0] ?? 'none listed' };
    const other = api(pigeon, theirs.auth).webhookEndpoints;
    for (const res of [
      await other.get({ params }),
      await other.update({ params, body: {} }),
      await other.delete({ params }),
      await other.deliveries({ params }),
      await other.delivery({ params: delivery }),
      await other.replay({ params: delivery, body: {} }),
      await other.test({ params, body: {} }),
      await other.rotateSecret({ params, body: {} }),
      await other.recover({ params, body: { after: new Date(0).toISOString() } }),
    ]) {
      expectEnvelope(res, 404, 'NOT_FOUND');
    }
    expect(bodyOf(await other.list(), 200).data).toEqual([]);
  });

  it('is for OWNER and ADMIN sessions: a MEMBER gets 403 on every endpoint route and changes nothing', async () => {
    const { owner, project, auth } = await newProject(pigeon);
    const hook = await target();
    const endpoint = await createEndpoint(auth, { url: `${hook.origin}/m`, eventTypes: ['member.*'] });
    const test = await api(pigeon, auth).webhookEndpoints.test({ params: { id: endpoint.id }, body: {} });
    expect(test.status, JSON.stringify(test.body)).toBe(202);
    const testDelivery = { id: endpoint.id, deliveryId: bodyOf(test, 202).id };
    const [member, admin] = await Promise.all([signUp(pigeon), signUp(pigeon)]);
    for (const [user, role] of [
      [member, 'MEMBER'],
      [admin, 'ADMIN'],
    ] as const) {
      const added = await api(pigeon, { cookie: owner.cookie }).projects.inviteMember({
        params: { id: project.id },
        body: { email: user.user.email, role },
      });
      expect(added.status, JSON.stringify(added.body)).toBe(201);
    }
    const session = (cookie: string) => api(pigeon, { cookie, 'x-project-id': project.id }).webhookEndpoints;
    const asMember = session(member.cookie);
    const params = { id: endpoint.id };
    const routes: Array<[string, () => Promise<{ status: number; body: unknown; headers: Headers }>]> = [
      ['GET /webhook-endpoints', () => asMember.list()],
      ['POST /webhook-endpoints', () => asMember.create({ body: { url: `${hook.origin}/member`, eventTypes: ['*'] } })],
      ['GET /webhook-endpoints/:id', () => asMember.get({ params })],
      [
        'PATCH /webhook-endpoints/:id',
        () => asMember.update({ params, body: { enabled: false, url: `${hook.origin}/taken` } }),
      ],
      ['DELETE /webhook-endpoints/:id', () => asMember.delete({ params })],
      ['POST /webhook-endpoints/:id/rotate-secret', () => asMember.rotateSecret({ params, body: { overlapHours: 1 } })],
      ['POST /webhook-endpoints/:id/test', () => asMember.test({ params, body: {} })],
      ['GET /webhook-endpoints/:id/deliveries', () => asMember.deliveries({ params })],
      ['GET /webhook-endpoints/:id/deliveries/:deliveryId', () => asMember.delivery({ params: testDelivery })],
      [
        'POST /webhook-endpoints/:id/deliveries/:deliveryId/replay',
        () => asMember.replay({ params: testDelivery, body: {} }),
      ],
    ];
    for (const [route, call] of routes) {
      const error = expectEnvelope(await call(), 403, 'INSUFFICIENT_ROLE');
      expect(error.message, route).toContain('OWNER or ADMIN');
    }
    // Nothing changed: one endpoint, same URL and secret, enabled, its one delivery not replayed.
    const after = bodyOf(await api(pigeon, auth).webhookEndpoints.list(), 200);
    expect(after.data).toHaveLength(1);
    expect(after.data[0]).toMatchObject({
      id: endpoint.id,
      url: `${hook.origin}/m`,
      secret: endpoint.secret,
      enabled: true,
    });
    const [delivery] = await until(
      () => deliveriesOf(auth, endpoint.id),
      (d) => d[0]?.status === 'SUCCEEDED',
    );
    expect(delivery?.attempts).toHaveLength(1);
    // An ADMIN session of the same project may.
    const asAdmin = await session(admin.cookie).get({ params });
    expect(asAdmin.status, JSON.stringify(asAdmin.body)).toBe(200);
    expect(bodyOf(asAdmin, 200).secret).toBe(endpoint.secret);
  });

  it('refuses bad endpoint input with 422 naming the field, and more endpoints than the documented maximum', async () => {
    const { auth } = await newProject(pigeon);
    // Values the server refuses; their shape fits the contract's types.
    const cases: Array<[EndpointInput, string]> = [
      [{ url: 'not a url', eventTypes: ['*'] }, 'url'],
      [{ url: 'ftp://example.com/hook', eventTypes: ['*'] }, 'url'],
      [{ url: 'https://example.com/hook', eventTypes: ['email.opened'] }, 'eventTypes.0'],
      [{ url: 'https://example.com/hook', eventTypes: ['email.sent', 'contact.created'] }, 'eventTypes.1'],
      [{ url: 'https://example.com/hook', eventTypes: ['segment.pro'] }, 'eventTypes.0'],
      [{ url: 'https://example.com/hook', eventTypes: ['or*der'] }, 'eventTypes.0'],
      [{ url: 'https://example.com/hook', eventTypes: [] }, 'eventTypes'],
    ];
    for (const [body, field] of cases) {
      const error = expectEnvelope(await api(pigeon, auth).webhookEndpoints.create({ body }), 422, 'VALIDATION_ERROR');
      expect(
        error.errors?.map((e) => e.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    for (const good of [['email.*'], ['order.*', 'segment.pro.entry', 'segment.*', 'signup'], ['*']]) {
      await createEndpoint(auth, { url: 'https://example.com/hook', eventTypes: good, enabled: false });
    }
    for (let i = 3; i < 20; i++) await createEndpoint(auth, { url: `https://example.com/h${i}`, eventTypes: ['*'] });
    const client = api(pigeon, auth);
    const tooMany = await client.webhookEndpoints.create({
      body: { url: 'https://example.com/21', eventTypes: ['*'] },
    });
    const error = expectEnvelope(tooMany, 422, 'VALIDATION_ERROR');
    expect(error.message + JSON.stringify(error.errors)).toContain('20');
    expect(bodyOf(await client.webhookEndpoints.list(), 200).data).toHaveLength(20);
  });
});

describe('the SSRF guard (WEBHOOK_ALLOW_PRIVATE_NETWORKS off)', () => {
  let guarded: TestPigeon;
  beforeAll(async () => {
    guarded = await startTestPigeon({
      env: { DNS_SERVERS: dns.address, WEBHOOK_POLL_MS: '50', CHANGE_FEED_POLL_MS: '50' },
    });
  });
  afterAll(() => guarded?.stop());

  it('refuses private IP literals at creation and records a failed attempt when a name resolves to one', async () => {
    const { auth } = await newProject(guarded);
    const client = api(guarded, auth);
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://10.1.2.3/hook',
      'http://192.168.0.10/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/hook',
      'http://[fd00::1]/hook',
      'http://100.64.0.1/hook',
      'http://0.0.0.0/hook',
      'http://localhost:3000/hook',
      'http://localhost.:3000/hook',
      'http://LOCALHOST..:3000/hook',
      'http://api.localhost./hook',
    ]) {
      const res = await client.webhookEndpoints.create({ body: { url, eventTypes: ['*'] } });
      const error = expectEnvelope(res, 422, 'VALIDATION_ERROR');
      expect(error.errors?.[0]?.field, url).toBe('url');
    }
    const hook = await target();
    const name = `hooks-${process.pid}.example.test`;
    dns.setAddresses(name, '127.0.0.1');
    const endpoint = await createEndpoint(auth, { url: `http://${name}:${hook.port}/x`, eventTypes: ['*'] }, guarded);
    const test = bodyOf(await client.webhookEndpoints.test({ params: { id: endpoint.id }, body: {} }), 202);
    const attempt = await until(
      async () =>
        bodyOf(await client.webhookEndpoints.delivery({ params: { id: endpoint.id, deliveryId: test.id } }), 200)
          .attempts[0],
      Boolean,
    );
    expect(attempt).toMatchObject({ statusCode: null, error: expect.stringContaining('loopback') });
    expect(attempt?.error).toContain('WEBHOOK_ALLOW_PRIVATE_NETWORKS');
    expect(hook.received).toHaveLength(0);
    // Refused by the guard, it fails at once: a retry in 5 s (or over three days) would be refused the same way.
    const delivery = bodyOf(
      await client.webhookEndpoints.delivery({ params: { id: endpoint.id, deliveryId: test.id } }),
      200,
    );
    expect(delivery).toMatchObject({ status: 'FAILED', nextAttemptAt: null });
    expect(delivery.attempts).toHaveLength(1);
  });
});
