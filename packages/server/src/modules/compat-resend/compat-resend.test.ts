import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Resend } from 'resend';
import { beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { insertSuppression } from '../../../test/fixtures/deliverability.js';
import { startTestPigeon } from '../../../test/helpers.js';
import { mailOf, parseMessage } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { until } from '../../../test/until.js';
import { queryRows, sql } from '../../db/query.js';

const { pigeon, sink, dns } = await startMailingPigeon();

type Sender = Awaited<ReturnType<typeof verifiedSender>>;
let sender: Sender;
let resend: Resend;

beforeAll(async () => {
  sender = await verifiedSender(pigeon, dns);
  // As an application would point the SDK at Pigeon: RESEND_BASE_URL, read when the client is made.
  process.env.RESEND_BASE_URL = `${pigeon.url}/resend`;
  resend = new Resend(sender.project.secretKey);
  delete process.env.RESEND_BASE_URL;
});

const emailCount = async (projectId: string) =>
  (
    await queryRows<{ n: number }>(
      pigeon.deps.db.pool,
      sql`SELECT count(*)::int AS n FROM emails WHERE project_id = ${projectId}`,
    )
  )[0]?.n;

const inAnHour = (hours = 1) => new Date(Date.now() + hours * 3_600_000).toISOString();

describe("Resend's wire format under /resend, with the resend npm client", () => {
  it('sends an email with copies, tags, headers and an attachment; reads it back in Resend’s email object', async () => {
    const { data, error } = await resend.emails.send({
      from: `Acme <${sender.from}>`,
      to: ['ada@example.com'],
      cc: 'bob@example.com',
      bcc: ['cy@example.com'],
      replyTo: `help@${sender.domain}`,
      subject: 'Your receipt',
      html: '<p>Thanks, <strong>Ada</strong></p>',
      text: 'Thanks, Ada',
      tags: [{ name: 'kind', value: 'receipt' }],
      headers: { 'X-Entity-Ref-ID': 'order-42' },
      attachments: [{ filename: 'receipt.txt', content: Buffer.from('total: 42') }],
    });
    expect(error).toBeNull();
    const id = data?.id as string;
    const message = parseMessage((await mailOf(sink, id)).raw);
    expect(message.headers.get('subject')).toBe('Your receipt');
    expect(message.headers.get('reply-to')).toBe(`help@${sender.domain}`);
    expect(message.headers.get('x-entity-ref-id')).toBe('order-42');
    expect(message.raw).toContain(Buffer.from('total: 42').toString('base64'));

    const got = await until(
      () => resend.emails.get(id),
      (r) => r.data?.last_event === 'sent' || r.data?.last_event === 'delivered',
    );
    expect(got.error).toBeNull();
    expect(got.data).toMatchObject({
      object: 'email',
      id,
      to: ['ada@example.com'],
      from: `Acme <${sender.from}>`,
      subject: 'Your receipt',
      html: expect.stringContaining('<strong>Ada</strong>'),
      text: 'Thanks, Ada',
      cc: ['bob@example.com'],
      bcc: ['cy@example.com'],
      reply_to: [`help@${sender.domain}`],
      scheduled_at: null,
      tags: [{ name: 'kind', value: 'receipt' }],
    });
  });

  it('sends a text-only email (its HTML made from the text, escaped)', async () => {
    const { data } = await resend.emails.send({
      from: sender.from,
      to: 'text@example.com',
      subject: 'Plain',
      text: 'a < b\nsecond line',
    });
    const got = await resend.emails.get(data?.id as string);
    expect(got.data?.text).toBe('a < b\nsecond line');
    expect(got.data?.html).toContain('a &lt; b<br>second line');
  });

  it('sends a batch: one id per message, every message delivered', async () => {
    const { data, error } = await resend.batch.send([
      { from: sender.from, to: 'one@example.com', subject: 'One', html: '<p>1</p>' },
      { from: sender.from, to: 'two@example.com', subject: 'Two', html: '<p>2</p>' },
    ]);
    expect(error).toBeNull();
    const ids = (data?.data ?? []).map((d) => d.id);
    expect(ids).toHaveLength(2);
    const delivered = await Promise.all(ids.map((id) => mailOf(sink, id)));
    expect(delivered.map((m) => m.to)).toEqual([['one@example.com'], ['two@example.com']]);
  });

  it('schedules, moves and cancels a send', async () => {
    const at = inAnHour();
    const sent = await resend.emails.send({
      from: sender.from,
      to: 'later@example.com',
      subject: 'Later',
      html: '<p>later</p>',
      scheduledAt: at,
    });
    const id = sent.data?.id as string;
    const scheduled = await resend.emails.get(id);
    expect(scheduled.data).toMatchObject({ last_event: 'scheduled', scheduled_at: at });

    const later = inAnHour(2);
    const moved = await resend.emails.update({ id, scheduledAt: later });
    expect(moved.error).toBeNull();
    expect(moved.data).toEqual({ object: 'email', id });
    expect((await resend.emails.get(id)).data?.scheduled_at).toBe(later);

    const cancelled = await resend.emails.cancel(id);
    expect(cancelled.data).toEqual({ object: 'email', id });
    expect((await resend.emails.get(id)).data?.last_event).toBe('canceled');

    // untyped: outside the contract (Resend's compatibility routes)
    const withTo = await pigeon.request('PATCH', `/resend/emails/${id}`, {
      headers: sender.auth,
      body: { scheduled_at: inAnHour(3), to: 'someone@example.com' },
    });
    expect(withTo.body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(withTo.body.message).toContain("'to'");

    const again = await resend.emails.update({ id, scheduledAt: inAnHour(3) });
    expect(again.error).toEqual({
      statusCode: 409,
      name: 'validation_error',
      message: expect.stringMatching(/CANCELLED/),
    });
  });

  it('lists and reads the project’s domains', async () => {
    const listed = await resend.domains.list();
    expect(listed.error).toBeNull();
    expect(listed.data?.object).toBe('list');
    const mine = listed.data?.data.find((d) => d.name === sender.domain);
    expect(mine).toMatchObject({ status: 'verified', created_at: expect.any(String) });
    const got = await resend.domains.get(mine?.id as string);
    expect(got.data).toMatchObject({ object: 'domain', name: sender.domain, status: 'verified' });
    const dkim = got.data?.records.find((r) => r.record === 'DKIM');
    expect(dkim).toMatchObject({ type: 'TXT', status: 'verified', value: expect.stringContaining('v=DKIM1') });
  });

  it('one audience per project: its contacts are the project’s contacts', async () => {
    const { project, auth } = await newProject(pigeon);
    const client = new Resend(project.secretKey, { baseUrl: `${pigeon.url}/resend` });
    const audiences = await client.audiences.list();
    expect(audiences.data?.data).toEqual([{ id: project.id, name: 'Test project', created_at: expect.any(String) }]);
    expect((await client.audiences.get(project.id)).data).toMatchObject({ id: project.id, name: 'Test project' });

    const created = await client.contacts.create({
      audienceId: project.id,
      email: 'Ada@Example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      unsubscribed: false,
    });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ object: 'contact', id: expect.any(String) });
    const id = created.data?.id as string;
    await client.contacts.create({ email: 'grace@example.com', properties: { plan: 'pro' } });

    const native = await api(pigeon, auth).contacts.get({ params: { id } });
    expect(native.body).toMatchObject({
      email: 'ada@example.com',
      subscribed: true,
      data: { firstName: 'Ada', lastName: 'Lovelace' },
    });

    const byEmail = await client.contacts.get({ audienceId: project.id, email: 'ada@example.com' });
    expect(byEmail.data).toMatchObject({
      object: 'contact',
      id,
      first_name: 'Ada',
      last_name: 'Lovelace',
      unsubscribed: false,
    });
    const updated = await client.contacts.update({
      audienceId: project.id,
      id,
      unsubscribed: true,
      firstName: 'Augusta',
    });
    expect(updated.data).toEqual({ object: 'contact', id });
    expect((await client.contacts.get(id)).data).toMatchObject({ first_name: 'Augusta', unsubscribed: true });

    const listed = await client.contacts.list({ audienceId: project.id });
    expect(listed.data?.data.map((c) => c.email).sort()).toEqual(['ada@example.com', 'grace@example.com']);
    expect((await client.contacts.list()).data?.data).toHaveLength(2);

    const removed = await client.contacts.remove({ audienceId: project.id, email: 'grace@example.com' });
    expect(removed.data).toMatchObject({ object: 'contact', deleted: true });
    expect((await client.contacts.list()).data?.data).toHaveLength(1);

    // untyped: outside the contract (Resend's compatibility routes)
    const withSegments = await pigeon.request('POST', '/resend/contacts', {
      headers: auth,
      body: { email: 'segmented@example.com', segments: ['vip'] },
    });
    expect(withSegments.body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(withSegments.body.message).toContain('segments');
    // untyped: outside the contract (Resend's compatibility routes)
    const badProperties = await pigeon.request('PATCH', `/resend/contacts/${id}`, {
      headers: auth,
      body: { unsubscribed: 'no' },
    });
    expect(badProperties.body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect((await client.contacts.list()).data?.data).toHaveLength(1);
    expect((await client.contacts.get(id)).data?.unsubscribed).toBe(true);

    const otherAudience = await client.contacts.list({ audienceId: sender.project.id });
    expect(otherAudience.error).toEqual({ statusCode: 404, name: 'not_found', message: 'Audience not found' });
  });

  it('an Idempotency-Key retry answers the first send’s id and sends nothing more; another body under it is a 409', async () => {
    const body = { from: sender.from, to: 'once@example.com', subject: 'Once', html: '<p>once</p>' };
    const key = `order-${Date.now()}`;
    const first = await resend.emails.send(body, { idempotencyKey: key });
    const retry = await resend.emails.send(body, { idempotencyKey: key });
    expect(first.error).toBeNull();
    expect(retry.data).toEqual(first.data);
    await mailOf(sink, first.data?.id as string);
    const rows = await queryRows<{ n: number }>(
      pigeon.deps.db.pool,
      sql`SELECT count(*)::int AS n FROM emails WHERE to_email = ${'once@example.com'}`,
    );
    expect(rows[0]?.n).toBe(1);

    const other = await resend.emails.send({ ...body, subject: 'Twice' }, { idempotencyKey: key });
    expect(other.error).toMatchObject({ statusCode: 409, name: 'invalid_idempotent_request' });
  });

  it('errors come in Resend’s shape: keys, missing fields, unknown fields, wrong types, other projects’ ids', async () => {
    const before = await emailCount(sender.project.id);
    const wrongKey = new Resend('sk_not_a_key', { baseUrl: `${pigeon.url}/resend` });
    const refused = await wrongKey.emails.get('00000000-0000-4000-8000-000000000000');
    expect(refused.error).toEqual({ statusCode: 403, name: 'invalid_api_Key', message: expect.any(String) });

    const raw = (body: unknown, headers: Record<string, string> = {}) =>
      // untyped: outside the contract (Resend's compatibility routes)
      pigeon.request('POST', '/resend/emails', {
        headers: { authorization: `Bearer ${sender.project.secretKey}`, ...headers },
        body,
      });
    // untyped: outside the contract (Resend's compatibility routes)
    const noKey = await pigeon.request('GET', '/resend/domains');
    expect(noKey.status).toBe(401);
    expect(noKey.body).toEqual({ statusCode: 401, name: 'missing_api_key', message: expect.any(String) });

    const missing = await resend.emails.send({ from: sender.from, subject: 'No to', html: '<p>x</p>' } as never);
    expect(missing.error).toEqual({ statusCode: 422, name: 'missing_required_field', message: 'Missing `to` field.' });

    const base = { from: sender.from, to: 'x@example.com', subject: 'x', html: '<p>x</p>' };
    const unknown = await raw({ ...base, template_id: 'welcome' });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: expect.stringContaining('template_id'),
    });
    const unknownInTag = await raw({ ...base, tags: [{ name: 'a', value: 'b', colour: 'red' }] });
    expect(unknownInTag.body.message).toMatch(/colour.*tags\.0/);
    const wrongType = await raw({ ...base, to: 42 });
    expect(wrongType.body).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
      message: expect.stringContaining('`to`'),
    });
    const badAddress = await raw({ ...base, to: 'not an address' });
    expect(badAddress.body).toMatchObject({ name: 'validation_error', message: expect.stringContaining('`to`') });
    const remote = await raw({ ...base, attachments: [{ filename: 'a.pdf', path: 'https://example.com/a.pdf' }] });
    expect(remote.body).toMatchObject({
      name: 'validation_error',
      message: expect.stringContaining('attachments.0.path'),
    });
    const twoReplies = await raw({ ...base, reply_to: ['a@example.com', 'b@example.com'] });
    expect(twoReplies.body.message).toContain('reply_to');
    const naturalTime = await raw({ ...base, scheduled_at: 'in 1 min' });
    expect(naturalTime.body.message).toContain('scheduled_at');
    // untyped: outside the contract (Resend's compatibility routes)
    const badBatch = await pigeon.request('POST', '/resend/emails/batch', {
      headers: { authorization: `Bearer ${sender.project.secretKey}` },
      body: [base, { ...base, attachments: [] }],
    });
    // untyped: outside the contract (Resend's compatibility routes)
    const badAddressInBatch = await pigeon.request('POST', '/resend/emails/batch', {
      headers: { authorization: `Bearer ${sender.project.secretKey}` },
      body: [base, { ...base, cc: 'nope' }],
    });
    expect(badAddressInBatch.body).toMatchObject({
      name: 'validation_error',
      message: expect.stringContaining('`1.cc`'),
    });
    expect(badBatch.body).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
      message: expect.stringContaining('attachments'),
    });
    const unverified = await raw({ ...base, from: 'hello@not-verified.example.com' });
    expect(unverified.status).toBe(403);
    expect(unverified.body).toMatchObject({ statusCode: 403, name: 'validation_error' });
    expect(unverified.body.message).toContain('not-verified.example.com');
    await insertSuppression(pigeon.deps.db.pool, sender.project.id, 'gone@example.com');
    const suppressed = await raw({ ...base, to: 'gone@example.com' });
    expect(suppressed.body).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: expect.stringContaining('gone@example.com suppressed'),
    });
    expect(await emailCount(sender.project.id)).toBe(before);

    const stranger = await newProject(pigeon);
    const strangerClient = new Resend(stranger.project.secretKey, { baseUrl: `${pigeon.url}/resend` });
    const sent = await resend.emails.send({ ...base, scheduledAt: inAnHour() });
    const id = sent.data?.id as string;
    const notYours = { statusCode: 404, name: 'not_found', message: 'Email not found' };
    expect((await strangerClient.emails.get(id)).error).toEqual(notYours);
    expect((await strangerClient.emails.cancel(id)).error).toEqual(notYours);
    expect((await strangerClient.emails.update({ id, scheduledAt: inAnHour(2) })).error).toEqual(notYours);
    const domains = await resend.domains.list();
    const domainId = domains.data?.data[0]?.id as string;
    expect((await strangerClient.domains.get(domainId)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await resend.emails.get(id)).data?.last_event).toBe('scheduled');
    await resend.emails.cancel(id);
  });

  it('leaves the native routes and their error envelope as they are', async () => {
    const res = await api(pigeon, sender.auth).sentEmails.get({
      params: { id: '00000000-0000-4000-8000-000000000000' },
    });
    expect(res.status).toBe(404);
    expect(bodyOf(res, 404).error.code).toBe('NOT_FOUND');
    // untyped: outside the contract (Resend's compatibility routes)
    const unknownRoute = await pigeon.request('GET', '/resend/nothing-here', { headers: sender.auth });
    expect(unknownRoute.body).toEqual({ statusCode: 404, name: 'not_found', message: expect.any(String) });
  });
});

describe("docs/coming-from-resend.md's snippet", () => {
  it('runs as written, with RESEND_BASE_URL and RESEND_API_KEY pointing at Pigeon', async () => {
    const page = readFileSync(
      fileURLToPath(new URL('../../../../../docs/coming-from-resend.md', import.meta.url)),
      'utf8',
    );
    const snippet = /```js\n([\s\S]*?)```/.exec(page)?.[1] ?? '';
    expect(snippet).toContain("from 'resend'");
    // Next to this package's node_modules, where resend is installed; the sender is the test's verified domain.
    const file = join(fileURLToPath(new URL('../../../', import.meta.url)), `.docs-resend-${process.pid}.mjs`);
    writeFileSync(
      file,
      `${snippet.replace('hello@yourdomain.com', sender.from)}\nif (error) throw new Error(error.message);\nconsole.log(data.id);\n`,
    );
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [file], {
        env: {
          PATH: process.env.PATH ?? '',
          RESEND_BASE_URL: `${pigeon.url}/resend`,
          RESEND_API_KEY: sender.project.secretKey,
        },
      });
      const id = stdout.trim();
      expect((await mailOf(sink, id)).to).toEqual(['ada@example.com']);
    } finally {
      rmSync(file, { force: true });
    }
  });
});

describe('the rate limit, in each layer’s shape', () => {
  it('answers 429 rate_limit_exceeded to Resend’s client and Plunk’s body to /v1/contacts, with Retry-After', async () => {
    const limited = await startTestPigeon({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
    try {
      const { project, auth } = await newProject(limited);
      const client = new Resend(project.secretKey, { baseUrl: `${limited.url}/resend` });
      // Two a minute: the third is refused (the fifth if a minute turned between them).
      let refused = await client.domains.list();
      for (let i = 0; i < 4 && !refused.error; i++) refused = await client.domains.list();
      expect(refused.error).toEqual({ statusCode: 429, name: 'rate_limit_exceeded', message: expect.any(String) });
      expect(Number(refused.headers?.['retry-after'])).toBeGreaterThan(0);
      // untyped: outside the contract (Plunk's compatibility routes)
      let plunk = await limited.request('GET', '/v1/contacts/count', { headers: auth });
      for (let i = 0; i < 4 && plunk.status === 200; i++) {
        // untyped: outside the contract (Plunk's compatibility routes)
        plunk = await limited.request('GET', '/v1/contacts/count', { headers: auth });
      }
      expect(plunk.status).toBe(429);
      expect(plunk.body).toEqual({
        code: 429,
        error: 'Too Many Requests',
        message: expect.any(String),
        time: expect.any(Number),
      });
    } finally {
      await limited.stop();
    }
  });
});
