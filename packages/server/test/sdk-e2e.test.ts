import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The built SDK, exactly as customers install it (the test command builds before running).
import { createPigeon, Pigeon, PigeonError } from '../../sdk/dist/index.js';
import { queryRows, sql } from '../src/db/query.js';
import { recordDeliveryFeedback } from '../src/modules/deliverability/feedback.js';
import { newProject } from './accounts.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { startTestPigeon, type TestPigeon } from './helpers.js';
import { imageFixture } from './uploads.js';

let pigeon: TestPigeon;
let dns: TestDnsServer;
let keys: { id: string; publicKey: string; secretKey: string };
beforeAll(async () => {
  dns = await startDnsServer();
  pigeon = await startTestPigeon({ env: { DNS_SERVERS: dns.address } });
  keys = (await newProject(pigeon)).project;
});
afterAll(async () => {
  await pigeon?.stop();
  await dns?.close();
});

describe('the SDK against a real server', () => {
  it('tracks with a public key and reads back with the secret key', async () => {
    const browser = createPigeon({ apiKey: keys.publicKey as `pk_${string}`, baseUrl: pigeon.url });
    const result = await browser.events.track({ email: 'Sdk@Example.com', event: 'signed-up', data: { plan: 'pro' } });
    const api = new Pigeon({ apiKey: keys.secretKey, baseUrl: pigeon.url });
    const contact = await api.contacts.get(result.contact);
    expect(contact).toMatchObject({ email: 'sdk@example.com', subscribed: true, data: { plan: 'pro' } });
    const events = await api.events.forContact(contact.id);
    expect(events.data.map((e) => e.name)).toEqual(['signed-up']);
  });

  it('sends untracked on request and reads the send back from the activity feed', async () => {
    const api = new Pigeon({ apiKey: keys.secretKey, baseUrl: pigeon.url });
    await api.domains.create('sdk.example'); // verified at once on the local outbox
    const sent = await api.emails.send({
      to: 'reader@example.com',
      from: 'hi@sdk.example',
      subject: 'Hello',
      body: '<a href="https://example.com">x</a>',
      tracking: false,
    });
    const emailId = sent.emails[0]?.email;
    let feed = await api.activity.list({ types: ['email.sent'] });
    for (let i = 0; i < 200 && feed.data.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 25));
      feed = await api.activity.list({ types: ['email.sent'] });
    }
    expect(feed.data).toMatchObject([{ type: 'email.sent', emailId, subject: 'Hello' }]);
    const rows = await queryRows(pigeon.deps.db.pool, sql`SELECT tracked, html FROM emails WHERE id = ${emailId}`);
    expect(rows[0]).toMatchObject({ tracked: false, html: '<a href="https://example.com">x</a>' });
  });

  it('sends a batch, and waits for a campaign to be sent with progress', async () => {
    const { project } = await newProject(pigeon);
    const api = new Pigeon({ apiKey: project.secretKey, baseUrl: pigeon.url });
    await api.domains.create('sdk-batch.example');
    const batch = await api.emails.sendBatch([
      { to: 'Ada <ada@example.com>', from: 'Team <hi@sdk-batch.example>', subject: 'One', body: '<p>1</p>' },
      { to: 'bob@example.com', from: 'hi@sdk-batch.example', subject: 'Two {{x}}', body: '<p>2</p>', tags: { n: '2' } },
    ]);
    expect(batch.results.map((r) => r.emails.length)).toEqual([1, 1]);
    expect(batch.results[1]?.warnings).toMatchObject([{ code: 'missing_variable', field: 'x' }]);

    for (const email of ['c1@example.com', 'c2@example.com', 'c3@example.com']) {
      await api.contacts.create({ email, subscribed: true });
    }
    const campaign = await api.campaigns.create({
      name: 'Wait for me',
      subject: 'News',
      body: '<p>News</p>',
      from: 'hi@sdk-batch.example',
      audienceType: 'ALL',
    });
    await api.campaigns.send(campaign.id);
    const seen: string[] = [];
    const done = await api.campaigns.waitForSent(campaign.id, {
      intervalMs: 50,
      timeoutMs: 30_000,
      onProgress: (p) => seen.push(`${p.status} ${p.sent}/${p.totalRecipients} pending ${p.pending}`),
    });
    expect(done).toMatchObject({ status: 'SENT', sent: 3, pending: 0, cancelled: 0, totalRecipients: 3 });
    expect(seen.at(-1)).toBe('SENT 3/3 pending 0');
  });

  it('verifies an address and lists and lifts a suppression', async () => {
    const api = new Pigeon({ apiKey: keys.secretKey, baseUrl: pigeon.url });
    dns.setMx('sdk-verify.example', '10 mx.sdk-verify.example');
    const checked = await api.verify('Jane+news@sdk-verify.example');
    expect(checked).toMatchObject({ email: 'jane+news@sdk-verify.example', valid: true, isPlusAddressed: true });

    await api.domains.create('sdk-suppress.example');
    const sent = await api.emails.send({
      to: 'gone@example.com',
      from: 'hi@sdk-suppress.example',
      subject: 's',
      body: 'b',
    });
    const emailId = sent.emails[0]?.email ?? '';
    const feedback = { kind: 'bounce', bounceType: 'hard', diagnostic: '550 5.1.1 unknown', source: 'sns' } as const;
    await recordDeliveryFeedback(pigeon.deps, emailId, feedback);
    const seen = [];
    for await (const s of api.suppressions.all()) seen.push(s);
    expect(seen).toMatchObject([{ email: 'gone@example.com', reason: 'hard_bounce', emailId }]);
    const skipped = await api.emails.send({
      to: 'gone@example.com',
      from: 'hi@sdk-suppress.example',
      subject: 's',
      body: 'b',
    });
    expect(skipped.skipped).toMatchObject([{ reason: 'suppressed', suppression: 'hard_bounce' }]);
    await api.suppressions.delete(seen[0]?.id ?? '');
    expect((await api.suppressions.list()).total).toBe(0);
  });

  it('sets a billing cap, reads consumption, and gets the 403 over the cap as a typed error', async () => {
    const own = (await newProject(pigeon)).project;
    const api = new Pigeon({ apiKey: own.secretKey, baseUrl: pigeon.url, maxRetries: 0 });
    await api.domains.create('billing-sdk.example');
    expect(await api.billing.setLimits(own.id, { transactional: 1 })).toEqual({
      transactional: 1,
      campaigns: null,
      workflows: null,
    });
    const mail = { from: 'hi@billing-sdk.example', subject: 'Hi', body: '<p>Hi</p>' };
    await api.emails.send({ ...mail, to: 'first@example.com' });
    const error = await api.emails.send({ ...mail, to: 'second@example.com' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({
      status: 403,
      code: 'BILLING_LIMIT_EXCEEDED',
      details: { category: 'transactional', limit: 1, used: 1 },
    });
    const usage = await api.billing.consumption(own.id);
    expect(usage.transactional).toEqual({ used: 1, limit: 1, remaining: 0 });
    const off = await api.billing.invoices(own.id).catch((e: unknown) => e);
    expect(off).toMatchObject({ status: 404, code: 'BILLING_DISABLED' });
  });

  it('uploads an image from a file path and reads its series, top events and campaign totals', async () => {
    const api = new Pigeon({ apiKey: keys.secretKey, baseUrl: pigeon.url });
    const image = await api.uploads.image(new URL('./fixtures/images/photo.jpg', import.meta.url).pathname);
    expect(image).toMatchObject({ contentType: 'image/jpeg', size: imageFixture('photo.jpg').length });
    const served = await fetch(image.url);
    expect(served.headers.get('content-type')).toBe('image/jpeg');
    const svg = await api.uploads.image(imageFixture('evil.svg')).catch((e: unknown) => e);
    expect(svg).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });

    const from = new Date(Date.now() - 86_400_000);
    const series = await api.analytics.timeseries({ interval: 'hour', from });
    expect(series.points.length).toBeGreaterThanOrEqual(24);
    expect(series.interval).toBe('hour');
    expect((await api.analytics.topCampaigns({ limit: 5 })).data).toEqual([]);
    expect(await api.analytics.campaignStats()).toMatchObject({ campaigns: 0, sent: 0 });
    expect((await api.analytics.topEvents({ type: 'all' })).data).toEqual(expect.any(Array));
  });

  it('a public key cannot read contacts: typed error from the server', async () => {
    const wrong = new Pigeon({ apiKey: keys.publicKey, baseUrl: pigeon.url });
    const error = await wrong.contacts.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({ status: 401, code: 'INVALID_API_KEY', requestId: expect.any(String) });
  });

  it('iterates every contact across pages, and imports a CSV and waits for the job', async () => {
    const api = new Pigeon({ apiKey: keys.secretKey, baseUrl: pigeon.url });
    const csv = `email,score\n${Array.from({ length: 45 }, (_, i) => `it${i}@example.com,${i}`).join('\n')}\n`;
    const { jobId } = await api.contacts.import(Buffer.from(csv));
    const progress: number[] = [];
    const job = await api.contacts.waitForJob(jobId, {
      kind: 'import',
      intervalMs: 50,
      onProgress: (j) => progress.push(j.progress),
    });
    expect(job).toMatchObject({ status: 'completed', created: 45 });
    expect(progress.at(-1)).toBe(100);
    const emails: string[] = [];
    for await (const c of api.contacts.all({ search: 'it', limit: 10 })) emails.push(c.email);
    expect(emails).toHaveLength(45);
    expect(new Set(emails).size).toBe(45);
  });

  it('builds a workflow, enables it, runs it by hand for a contact and sees the contact updated', async () => {
    const api = new Pigeon({ apiKey: keys.secretKey, baseUrl: pigeon.url });
    const contact = await api.contacts.create({ email: 'flow@example.com', data: { plan: 'free' } });
    const workflow = await api.workflows.create({ name: 'Upgrade', triggerConfig: { eventName: 'sdk-upgraded' } });
    expect(workflow).toMatchObject({ enabled: false, steps: [], transitions: [] });
    const step = await api.workflows.steps.add(workflow.id, {
      type: 'UPDATE_CONTACT',
      name: 'Mark upgraded',
      config: { updates: { plan: '{{workflow.plan}}', upgraded: true } },
    });
    const enabled = await api.workflows.enable(workflow.id);
    expect(enabled).toMatchObject({ enabled: true, steps: [{ id: step.id, type: 'UPDATE_CONTACT' }] });

    const started = await api.workflows.executions.start(workflow.id, {
      contactId: contact.id,
      context: { plan: 'pro' },
    });
    expect(started).toMatchObject({
      workflowId: workflow.id,
      contactId: contact.id,
      context: { workflow: { plan: 'pro' } },
    });
    let execution = await api.workflows.executions.get(workflow.id, started.id);
    for (let i = 0; i < 400 && (execution.status === 'RUNNING' || execution.status === 'WAITING'); i++) {
      await new Promise((r) => setTimeout(r, 25));
      execution = await api.workflows.executions.get(workflow.id, started.id);
    }
    expect(execution).toMatchObject({
      status: 'COMPLETED',
      completedAt: expect.any(String),
      steps: [{ stepId: step.id, stepType: 'UPDATE_CONTACT', status: 'COMPLETED', error: null }],
    });
    expect((await api.contacts.get(contact.id)).data).toEqual({ plan: 'pro', upgraded: true });

    const page = await api.workflows.executions.list(workflow.id, { status: 'COMPLETED', contactId: contact.id });
    expect(page).toMatchObject({ data: [{ id: started.id }], hasMore: false });
    const error = await api.workflows.executions.start(workflow.id, { contactId: contact.id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({ status: 409, code: 'CONFLICT' }); // no re-entry by default
    expect((await api.workflows.list()).find((w) => w.id === workflow.id)?.executions).toEqual({ active: 0, total: 1 });
  });

  it('a reused Idempotency-Key surfaces as a typed 409 with the original request', async () => {
    const api = new Pigeon({ apiKey: keys.secretKey, baseUrl: pigeon.url });
    await api.events.track({ email: 'k@example.com', event: 'order' }, { idempotencyKey: 'sdk-order-1' });
    const error = await api.events
      .track({ email: 'k@example.com', event: 'order' }, { idempotencyKey: 'sdk-order-1' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 409, code: 'IDEMPOTENCY_KEY_REUSED', details: { originalStatusCode: 200 } });
  });

  it('returns the original result when the first response is lost after the server acted', async () => {
    let calls = 0;
    let dropNext = true;
    // A transport that delivers a request and then drops its response, as a broken connection does.
    const lossy: typeof fetch = async (input, init) => {
      calls++;
      const response = await fetch(input, init);
      if (dropNext) {
        dropNext = false;
        await response.text();
        throw new TypeError('fetch failed: socket hang up');
      }
      return response;
    };
    const api = new Pigeon({ apiKey: keys.secretKey, baseUrl: pigeon.url, fetch: lossy, retryBaseDelayMs: 1 });
    const plain = new Pigeon({ apiKey: keys.secretKey, baseUrl: pigeon.url });
    const result = await api.events.track({ email: 'lost@example.com', event: 'paid' });
    expect(calls).toBe(2);
    const events = await plain.events.forContact(result.contact);
    expect(events.data.map((e) => ({ id: e.id, name: e.name }))).toEqual([{ id: result.event, name: 'paid' }]);

    await plain.domains.create('lossy.example');
    [calls, dropNext] = [0, true];
    const sent = await api.emails.send({ to: 'lost@example.com', from: 'hi@lossy.example', subject: 'Hi', body: 'Hi' });
    expect(calls).toBe(2);
    const rows = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT id FROM emails WHERE to_email = ${'lost@example.com'}`,
    );
    expect(rows.map((r) => r.id)).toEqual([sent.emails[0]?.email]);
  });
});
