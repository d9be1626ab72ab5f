import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { queryRows, sql } from '../../db/query.js';

// The local outbox (no SMTP_URL): domains are verified as soon as they are added.
let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

async function projectWithDomain(domain: string) {
  const setup = await newProject(pigeon);
  const created = await api(pigeon, setup.auth).domains.create({ body: { domain } });
  expect(created.status === 201 && created.body.status).toBe('verified');
  const settings = (defaultFrom: string | null) =>
    api(pigeon, { cookie: setup.owner.cookie }).users.updateProject({
      params: { id: setup.project.id },
      body: { defaultFrom },
    });
  return { ...setup, settings };
}

/** The id of the one email a send queued. */
const queued = (res: Awaited<ReturnType<ReturnType<typeof api>['emails']['send']>>) =>
  bodyOf(res, 200).data.emails[0]?.email ?? 'nothing queued';

const storedEmail = async (id: string) => {
  const [email] = await queryRows(
    pigeon.deps.db.pool,
    sql`SELECT from_email, from_name, html FROM emails WHERE id = ${id}`,
  );
  if (!email) throw new Error(`no email ${id}`);
  return email;
};

describe('project default sender', () => {
  it('is refused without a verified domain, set on one, and used when the request and template name none', async () => {
    const { auth, owner, settings } = await projectWithDomain('default-from.example.com');
    const unverified = expectEnvelope(await settings('hi@elsewhere.example.com'), 403, 'INTERNAL_SERVER_ERROR');
    expect(unverified.details).toEqual({ reason: 'DOMAIN_NOT_VERIFIED', domain: 'elsewhere.example.com' });
    expectEnvelope(await settings('not an address'), 422, 'VALIDATION_ERROR');

    const client = api(pigeon, auth);
    const noSender = await client.emails.send({ body: { to: 'ada@example.com', subject: 'Hi', body: '<p>Hi</p>' } });
    const error = expectEnvelope(noSender, 422, 'VALIDATION_ERROR');
    expect(error.errors).toEqual([expect.objectContaining({ field: 'from', code: 'invalid_type' })]);
    // Clients written for Plunk print only the top-level message (expectEnvelope checked it is
    // error.message): it says how to fix it.
    expect(error.message).toContain('defaultFrom');
    expect(error.message).toContain('PATCH /users/@me/projects/:id');

    const set = await settings(' Hello@Default-From.example.com ');
    expect(set.status).toBe(200);
    expect(bodyOf(set, 200).defaultFrom).toBe('hello@default-from.example.com');
    const listed = await api(pigeon, { cookie: owner.cookie }).users.listProjects();
    expect(bodyOf(listed, 200)[0]?.defaultFrom).toBe('hello@default-from.example.com');

    const sent = await client.emails.send({
      body: { to: 'ada@example.com', subject: 'Hi', body: '<p>Hi</p>', name: 'Ada Co' },
    });
    expect(sent.status).toBe(200);
    const stored = await storedEmail(queued(sent));
    expect(stored).toMatchObject({ from_email: 'hello@default-from.example.com', from_name: 'Ada Co' });

    // The request's own sender still wins.
    const own = await client.emails.send({
      body: { to: 'ada@example.com', subject: 'Hi', body: '<p>Hi</p>', from: 'own@default-from.example.com' },
    });
    expect((await storedEmail(queued(own))).from_email).toBe('own@default-from.example.com');

    const cleared = await settings(null);
    expect(bodyOf(cleared, 200).defaultFrom).toBeNull();
    const again = await client.emails.send({ body: { to: 'ada@example.com', subject: 'Hi', body: '<p>Hi</p>' } });
    expectEnvelope(again, 422, 'VALIDATION_ERROR');
  });
});

describe('markdown bodies', () => {
  it('renders type "markdown" to HTML with raw HTML escaped and placeholders kept', async () => {
    const { auth } = await projectWithDomain('markdown.example.com');
    const res = await api(pigeon, auth).emails.send({
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
    const { html } = await storedEmail(queued(res));
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
    const html = await api(pigeon, auth).emails.send({ body: { ...base, type: 'html' } });
    expect((await storedEmail(queued(html))).html).toContain('# <b>x</b>');
    // A body type that does not exist, on purpose.
    const unknown = expectEnvelope(
      // untyped: wrong on purpose (a type not in the enum)
      await pigeon.request('POST', '/v1/send', { headers: auth, body: { ...base, type: 'text' } }),
      422,
      'VALIDATION_ERROR',
    );
    expect(unknown.errors).toEqual([expect.objectContaining({ field: 'type', code: 'invalid_enum_value' })]);
  });
});
