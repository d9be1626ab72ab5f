import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';

// Local outbox: domains are verified on creation, so templates can be made at once.
let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

// A domain is verified by one project at a time, so each project gets its own.
let domain = 'brand0.example';
let counter = 0;
async function projectWithDomain() {
  const setup = await newProject(pigeon);
  domain = `brand${++counter}.example`;
  const res = await api(pigeon, setup.auth).domains.create({ body: { domain } });
  expect(res.status === 201 && bodyOf(res, 201).status).toBe('verified');
  return setup;
}

const template = (over: Record<string, unknown> = {}) => ({
  name: 'Welcome',
  subject: 'Welcome {{name}}',
  body: '<p>Hi</p>',
  from: `hello@${domain}`,
  ...over,
});

describe('templates', () => {
  it('creates with MARKETING as the default type; missing fields answer the bare 400; unverified senders 403', async () => {
    const { auth } = await projectWithDomain();
    const created = await api(pigeon, auth).templates.create({
      body: template({ fromName: 'Brand', replyTo: `Support@${domain.toUpperCase()}` }),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      type: 'MARKETING',
      fromName: 'Brand',
      replyTo: `support@${domain}`,
      description: null,
    });
    // untyped: wrong on purpose (a body the contract's types refuse)
    const missing = await pigeon.request('POST', '/templates', {
      headers: auth,
      body: { name: 'x', subject: 's', body: 'b' }, // no from: not a valid body
    });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: expect.stringContaining('from') });
    const unverified = await api(pigeon, auth).templates.create({ body: template({ from: 'a@elsewhere.example' }) });
    expect(expectEnvelope(unverified, 403, 'INTERNAL_SERVER_ERROR').details).toEqual({
      reason: 'DOMAIN_NOT_VERIFIED',
      domain: 'elsewhere.example',
    });
  });

  it('lists with offset pages, a type filter, search on name/description/subject and sort fallbacks', async () => {
    const { auth } = await projectWithDomain();
    const names = ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo'];
    for (const [i, name] of names.entries()) {
      await api(pigeon, auth).templates.create({
        body: template({
          name,
          type: i % 2 ? 'TRANSACTIONAL' : 'MARKETING',
          description: i === 4 ? 'about receipts' : null,
        }),
      });
    }
    const page = await api(pigeon, auth).templates.list({ query: { page: 2, pageSize: 2, sort: 'name', dir: 'asc' } });
    expect(page.body).toMatchObject({ page: 2, pageSize: 2, total: 5, totalPages: 3 });
    expect(bodyOf(page, 200).data.map((t: { name: string }) => t.name)).toEqual(['Charlie', 'Delta']);
    const transactional = await api(pigeon, auth).templates.list({ query: { type: 'TRANSACTIONAL' } });
    expect(
      bodyOf(transactional, 200)
        .data.map((t: { name: string }) => t.name)
        .sort(),
    ).toEqual(['Bravo', 'Delta']);
    const search = await api(pigeon, auth).templates.list({ query: { search: 'RECEIPT' } });
    expect(bodyOf(search, 200).data.map((t: { name: string }) => t.name)).toEqual(['Echo']);
    const fallback = await api(pigeon, auth).templates.list({ query: { sort: 'weird', dir: 'up' } });
    expect(bodyOf(fallback, 200).data[0]?.name).toBe('Echo'); // createdAt desc
    expectEnvelope(await api(pigeon, auth).templates.list({ query: { page: 0 } }), 422, 'VALIDATION_ERROR');
  });

  it('gets, updates, duplicates, reports usage and deletes; another project sees 404', async () => {
    const { auth } = await projectWithDomain();
    const client = api(pigeon, auth);
    const made = await client.templates.create({ body: template() });
    if (made.status !== 201) throw new Error(`template not created: ${made.status}`);
    const created = made.body;
    const updated = await client.templates.update({
      params: { id: created.id },
      body: { subject: 'New subject', type: 'HEADLESS' },
    });
    expect(updated.body).toMatchObject({ subject: 'New subject', type: 'HEADLESS', name: 'Welcome' });
    expectEnvelope(
      await client.templates.update({ params: { id: created.id }, body: { from: 'x@nope.example' } }),
      403,
      'INTERNAL_SERVER_ERROR',
    );
    const copy = await client.templates.duplicate({ params: { id: created.id } });
    expect(copy.status).toBe(201);
    expect(copy.body).toMatchObject({ name: 'Welcome (copy)', subject: 'New subject' });
    expect(copy.status === 201 && copy.body.id).not.toBe(created.id);
    expect((await client.templates.usage({ params: { id: created.id } })).body).toEqual({
      campaigns: [],
      workflowSteps: [],
    });
    const other = await newProject(pigeon);
    const theirs = api(pigeon, other.auth).templates;
    const params = { id: created.id };
    for (const res of [
      await theirs.get({ params }),
      await theirs.update({ params, body: { name: 'x' } }),
      await theirs.delete({ params }),
      await theirs.duplicate({ params }),
    ]) {
      expectEnvelope(res, 404, 'NOT_FOUND');
    }
    expect((await client.templates.delete({ params: { id: created.id } })).status).toBe(204);
    expectEnvelope(await client.templates.get({ params: { id: created.id } }), 404, 'NOT_FOUND');
  });

  it('keeps a domain that templates send from', async () => {
    const { auth, project } = await projectWithDomain();
    const client = api(pigeon, auth);
    await client.templates.create({ body: template() });
    const domains = await client.domains.list({ params: { projectId: project.id } });
    if (domains.status !== 200) throw new Error(`domains not listed: ${domains.status}`);
    expectEnvelope(
      await client.domains.delete({ params: { id: domains.body[0]?.id ?? 'none listed' } }),
      409,
      'CONFLICT',
    );
  });

  it("previews content with a contact's data through the delivery renderer: warnings as /v1/send, Markdown converted, nothing stored", async () => {
    const { auth } = await newProject(pigeon);
    const client = api(pigeon, auth);
    const made = await client.contacts.create({ body: { email: 'ada@preview.example', data: { firstName: 'Ada' } } });
    const contactId = bodyOf(made, 201).id;
    const body = {
      subject: 'Hi {{firstName}}',
      body: '# Hello {{firstName}}\n\nYour plan: {{plan}}. [Manage]({{manageUrl}})',
      format: 'markdown' as const,
      contactId,
    };
    const preview = bodyOf(await client.templates.preview({ body }), 200);
    expect(preview.subject).toBe('Hi Ada');
    expect(preview.sourceHtml).toContain('<h1>Hello {{firstName}}</h1>');
    expect(preview.html).toContain('<h1>Hello Ada</h1>');
    expect(preview.html).toMatch(/href="http[^"]+\/manage\/[\w.-]+"/);
    expect(preview.text).toContain('Your plan: .');
    expect(preview.contact).toEqual({ id: contactId, email: 'ada@preview.example' });
    expect(preview.warnings).toEqual([
      expect.objectContaining({
        code: 'missing_variable',
        field: 'plan',
        message: expect.stringContaining('{{plan}}'),
      }),
    ]);
    // One-off data fills what the contact lacks; without a contact, a sample address without data.
    const filled = bodyOf(await client.templates.preview({ body: { ...body, data: { plan: 'pro' } } }), 200);
    expect(filled.warnings).toEqual([]);
    const sample = bodyOf(
      await client.templates.preview({ body: { subject: '{{firstName ?? "friend"}}', body: '<p>{{email}}</p>' } }),
      200,
    );
    expect(sample).toMatchObject({
      subject: 'friend',
      contact: { id: null, email: 'preview@example.com' },
      warnings: [],
    });
    expect(sample.html).toBe('<p>preview@example.com</p>');
    // Another project's contact is a 404; nothing was stored by previews.
    const other = await newProject(pigeon);
    expectEnvelope(await api(pigeon, other.auth).templates.preview({ body }), 404, 'NOT_FOUND');
    expect(bodyOf(await client.templates.list({ query: {} }), 200).total).toBe(0);
    expect(bodyOf(await client.sentEmails.list({ query: {} }), 200).data).toEqual([]);
  });
});
