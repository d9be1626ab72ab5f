import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';

// The local outbox (no SMTP_URL): domains are verified as soon as they are added.
let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

async function projectWithDomain(domain: string) {
  const setup = await newProject(pigeon);
  const created = await pigeon.request('POST', '/domains', { headers: setup.auth, body: { domain } });
  expect(created.body.status).toBe('verified');
  const settings = (body: unknown) =>
    pigeon.request('PATCH', `/users/@me/projects/${setup.project.id}`, {
      headers: { cookie: setup.owner.cookie },
      body,
    });
  return { ...setup, settings };
}

const storedEmail = async (id: string) =>
  (await pigeon.deps.db.pool.query('SELECT from_email, from_name, html FROM emails WHERE id = $1', [id])).rows[0];

describe('project default sender', () => {
  it('is refused without a verified domain, set on one, and used when the request and template name none', async () => {
    const { auth, owner, settings } = await projectWithDomain('default-from.example.com');
    const unverified = expectEnvelope(
      await settings({ defaultFrom: 'hi@elsewhere.example.com' }),
      403,
      'INTERNAL_SERVER_ERROR',
    );
    expect(unverified.details).toEqual({ reason: 'DOMAIN_NOT_VERIFIED', domain: 'elsewhere.example.com' });
    expectEnvelope(await settings({ defaultFrom: 'not an address' }), 422, 'VALIDATION_ERROR');

    const noSender = await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: { to: 'ada@example.com', subject: 'Hi', body: '<p>Hi</p>' },
    });
    const error = expectEnvelope(noSender, 422, 'VALIDATION_ERROR');
    expect(error.errors).toEqual([expect.objectContaining({ field: 'from', code: 'invalid_type' })]);
    // Clients written for Plunk print only the top-level message: it says how to fix it.
    expect(noSender.body.message).toContain('defaultFrom');
    expect(noSender.body.message).toContain('PATCH /users/@me/projects/:id');

    const set = await settings({ defaultFrom: ' Hello@Default-From.example.com ' });
    expect(set.status).toBe(200);
    expect(set.body.defaultFrom).toBe('hello@default-from.example.com');
    const listed = await pigeon.request('GET', '/users/@me/projects', { headers: { cookie: owner.cookie } });
    expect(listed.body[0].defaultFrom).toBe('hello@default-from.example.com');

    const sent = await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: { to: 'ada@example.com', subject: 'Hi', body: '<p>Hi</p>', name: 'Ada Co' },
    });
    expect(sent.status).toBe(200);
    const stored = await storedEmail(sent.body.data.emails[0].email);
    expect(stored).toMatchObject({ from_email: 'hello@default-from.example.com', from_name: 'Ada Co' });

    // The request's own sender still wins.
    const own = await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: { to: 'ada@example.com', subject: 'Hi', body: '<p>Hi</p>', from: 'own@default-from.example.com' },
    });
    expect((await storedEmail(own.body.data.emails[0].email)).from_email).toBe('own@default-from.example.com');

    const cleared = await settings({ defaultFrom: null });
    expect(cleared.body.defaultFrom).toBeNull();
    const again = await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: { to: 'ada@example.com', subject: 'Hi', body: '<p>Hi</p>' },
    });
    expectEnvelope(again, 422, 'VALIDATION_ERROR');
  });
});

describe('markdown bodies', () => {
  it('renders type "markdown" to HTML with raw HTML escaped and placeholders kept', async () => {
    const { auth } = await projectWithDomain('markdown.example.com');
    const res = await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: {
        to: 'ada@example.com',
        from: 'news@markdown.example.com',
        subject: 'Hi',
        type: 'markdown',
        data: { plan: 'pro' },
        body: [
          '# Hello {{name ?? "there"}}',
          '',
          'You are on **{{data.plan}}**. <script>alert(1)</script>',
          '',
          '[Unsubscribe]({{unsubscribeUrl}}) [bad](javascript:alert(1))',
        ].join('\n'),
      },
    });
    expect(res.status).toBe(200);
    const { html } = await storedEmail(res.body.data.emails[0].email);
    expect(html).toContain('<h1>Hello there</h1>');
    expect(html).toContain('You are on <strong>pro</strong>.');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>');
    expect(html).toContain(`<a href="${pigeon.deps.config.http.publicUrl}/unsubscribe/`);
    expect(html).toMatch(/\/unsubscribe\/[^"{}]+">Unsubscribe<\/a>/);
    expect(html).not.toContain('href="javascript:');
  });

  it('keeps html bodies as they are and refuses unknown types with 422', async () => {
    const { auth } = await projectWithDomain('html-type.example.com');
    const base = { to: 'ada@example.com', from: 'news@html-type.example.com', subject: 'Hi', body: '# <b>x</b>' };
    const html = await pigeon.request('POST', '/v1/send', { headers: auth, body: { ...base, type: 'html' } });
    expect((await storedEmail(html.body.data.emails[0].email)).html).toContain('# <b>x</b>');
    const unknown = expectEnvelope(
      await pigeon.request('POST', '/v1/send', { headers: auth, body: { ...base, type: 'text' } }),
      422,
      'VALIDATION_ERROR',
    );
    expect(unknown.errors).toEqual([expect.objectContaining({ field: 'type', code: 'invalid_enum_value' })]);
  });
});
