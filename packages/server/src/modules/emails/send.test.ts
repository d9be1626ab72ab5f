import { Resolver } from 'node:dns/promises';
import { authenticate } from 'mailauth';
import { describe, expect, it } from 'vitest';
import { eventNames, newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { expectEnvelope, startTestPigeon } from '../../../test/helpers.js';
import { mailOf } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { queryRows, sql } from '../../db/query.js';

const { pigeon, sink, dns } = await startMailingPigeon({ DELIVERY_RETRY_BASE_MS: '100' });

const projectWithVerifiedDomain = () => verifiedSender(pigeon, dns);

const dnsResolver = () => {
  const r = new Resolver();
  r.setServers([dns.address]);
  return async (name: string, rr: string) => r.resolve(name, rr as 'TXT');
};

async function emailStatus(id: string, until: string[], timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await queryRows(pigeon.deps.db.pool, sql`SELECT status, attempts FROM emails WHERE id = ${id}`);
    if (until.includes(rows[0]?.status) || Date.now() > deadline) return rows[0];
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('sender domains', () => {
  it('returns DKIM, SPF and DMARC records and verifies only when DNS publishes our DKIM key', async () => {
    const { auth, project } = await newProject(pigeon);
    const client = api(pigeon, auth);
    const res = await client.domains.create({ body: { domain: 'Pending.Example.org' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ domain: 'pending.example.org', status: 'pending', note: null });
    const created = bodyOf(res, 201);
    const [dkim, spf, dmarc] = created.records;
    if (!dkim || !spf) throw new Error('no DKIM or SPF record');
    expect(dkim).toMatchObject({
      type: 'TXT',
      purpose: 'dkim',
      required: true,
      name: `${created.dkimSelector}._domainkey.pending.example.org`,
    });
    expect(dkim.value).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]{300,}$/);
    expect(spf).toMatchObject({
      purpose: 'spf',
      name: 'pending.example.org',
      value: expect.stringMatching(/^v=spf1 /),
    });
    expect(dmarc).toMatchObject({ purpose: 'dmarc', name: '_dmarc.pending.example.org' });

    const domainId = { id: created.id };
    const missing = await client.domains.verify({ params: domainId });
    expect(missing.body).toMatchObject({
      status: 'pending',
      records: [{ status: 'missing' }, { status: 'missing' }, { status: 'missing' }],
    });
    dns.setTxt(dkim.name, 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwrong');
    const mismatch = bodyOf(await client.domains.verify({ params: domainId }), 200);
    expect(mismatch.records[0]?.status).toBe('mismatch');
    expect(mismatch.status).toBe('pending');
    dns.setTxt(dkim.name, dkim.value);
    dns.setTxt(spf.name, spf.value);
    const verified = bodyOf(await client.domains.verify({ params: domainId }), 200);
    expect(verified).toMatchObject({ status: 'verified', verifiedAt: expect.any(String) });
    expect(verified.records.map((r) => r.status)).toEqual(['verified', 'verified', 'missing']);

    const list = await client.domains.list({ params: { projectId: project.id } });
    expect(bodyOf(list, 200).map((d) => d.domain)).toEqual(['pending.example.org']);
    const other = await newProject(pigeon);
    const otherClient = api(pigeon, other.auth);
    expectEnvelope(await otherClient.domains.list({ params: { projectId: project.id } }), 404, 'NOT_FOUND');
    // Another project adding the verified domain learns nothing: the answer is that of a domain
    // nobody has (pending, no note), and it stays pending while only the first project's key is published.
    const taken = await otherClient.domains.create({ body: { domain: 'pending.example.org' } });
    const unknown = await otherClient.domains.create({ body: { domain: 'nobody-has-this.example.org' } });
    expect(taken.status).toBe(201);
    expect(unknown.status).toBe(201);
    const shape = (d: Record<string, unknown>) => ({
      keys: Object.keys(d).sort(),
      status: d.status,
      note: d.note,
      verifiedAt: d.verifiedAt,
      records: (d.records as Array<{ status: string }>).map((r) => r.status),
    });
    expect(shape(bodyOf(taken, 201))).toEqual(shape(bodyOf(unknown, 201)));
    const recheck = await otherClient.domains.verify({ params: { id: bodyOf(taken, 201).id } });
    expect(recheck.body).toMatchObject({ status: 'pending', verifiedAt: null });
  });

  it('refuses invalid domain names with 422', async () => {
    const { auth } = await newProject(pigeon);
    // Invalid names on purpose.
    for (const domain of ['localhost', 'exa mple.com', '-bad.com', 'a..b.com']) {
      expectEnvelope(await api(pigeon, auth).domains.create({ body: { domain } }), 422, 'VALIDATION_ERROR');
    }
  });

  it('verifies a domain at once with the local outbox, and says why', async () => {
    const outbox = await startTestPigeon({ databaseUrl: pigeon.deps.db.url, role: 'api' });
    try {
      const { auth } = await newProject(outbox);
      const res = await api(outbox, auth).domains.create({ body: { domain: 'outbox.example.net' } });
      expect(res.body).toMatchObject({ status: 'verified', note: expect.stringContaining('local outbox') });
    } finally {
      await outbox.stop();
    }
  });
});

describe('POST /v1/send', () => {
  it('refuses a sender on an unverified domain with 403 and the reason', async () => {
    const { auth } = await newProject(pigeon);
    const res = await api(pigeon, auth).emails.send({
      body: { to: 'a@example.com', from: 'me@unverified.example', subject: 'Hi', body: '<p>x</p>' },
    });
    const error = expectEnvelope(res, 403, 'INTERNAL_SERVER_ERROR');
    expect(error.details).toEqual({ reason: 'DOMAIN_NOT_VERIFIED', domain: 'unverified.example' });
    expect(error.suggestion).toContain('POST /domains');
  });

  it('delivers a DKIM-signed message that passes verification, aligned with the From domain', async () => {
    const { auth, from, domain } = await projectWithVerifiedDomain();
    const res = await api(pigeon, auth).emails.send({
      body: {
        to: { name: 'Ada L', email: 'Ada@Example.com' },
        from: { name: 'Team', email: from },
        subject: 'Hello {{name ?? "friend"}}',
        body: '<p>Hi {{name}} &amp; {{missing}}</p>',
        data: { name: 'Ada <3' },
      },
    });
    expect(res.status).toBe(200);
    expect(bodyOf(res, 200).data).toMatchObject({
      emails: [{ contact: { email: 'ada@example.com' }, email: expect.any(String) }],
      skipped: [],
    });
    const message = await mailOf(sink, bodyOf(res, 200).data.emails[0]?.email ?? 'nothing queued');
    expect(message.to).toEqual(['ada@example.com']);
    expect(message.raw).toMatch(/^Subject: Hello Ada <3/m);
    expect(message.raw).toContain('Hi Ada &#60;3 &amp; </p>'); // variables escaped; the template's own HTML kept
    expect(message.raw).toMatch(/Content-Type: text\/plain/);
    const result = await authenticate(message.raw, {
      ip: '127.0.0.1',
      helo: 'localhost',
      sender: from,
      resolver: dnsResolver(),
    });
    const dkim = result.dkim.results[0];
    expect(dkim?.status.result).toBe('pass');
    expect(dkim?.signingDomain).toBe(domain);
    const [queued] = bodyOf(res, 200).data.emails;
    const email = await emailStatus(queued?.email ?? 'nothing queued', ['SENT']);
    expect(email?.status).toBe('SENT');
    expect(await eventNames(pigeon, queued?.contact.id ?? 'nothing queued')).toContain('email.sent');
  });

  it('creates new contacts unsubscribed unless told, and records a subscription change', async () => {
    const { auth, from } = await projectWithVerifiedDomain();
    const client = api(pigeon, auth);
    const first = await client.emails.send({ body: { to: 'n@example.com', from, subject: 's', body: 'b' } });
    const id = bodyOf(first, 200).data.emails[0]?.contact.id ?? 'nothing queued';
    expect(bodyOf(await client.contacts.get({ params: { id } }), 200).subscribed).toBe(false);
    await client.emails.send({ body: { to: 'n@example.com', from, subject: 's', body: 'b', subscribed: true } });
    expect(bodyOf(await client.contacts.get({ params: { id } }), 200).subscribed).toBe(true);
    expect(await eventNames(pigeon, id)).toContain('contact.subscribed');
  });

  it('sends to each recipient of an array with its own rendering, and uses template content with overrides', async () => {
    const { auth, from } = await projectWithVerifiedDomain();
    const client = api(pigeon, auth);
    const template = await client.templates.create({
      body: {
        name: 'Welcome',
        subject: 'Welcome {{first ?? "there"}}',
        body: '<p>Plan: {{plan}}</p>',
        from,
        type: 'TRANSACTIONAL',
      },
    });
    const templateId = bodyOf(template, 201).id;
    await client.contacts.create({ body: { email: 'p1@example.com', data: { first: 'Pat', plan: 'pro' } } });
    const res = await client.emails.send({ body: { to: ['p1@example.com', 'p2@example.com'], template: templateId } });
    expect(bodyOf(res, 200).data.emails).toHaveLength(2);
    const received = await Promise.all(bodyOf(res, 200).data.emails.map((e) => mailOf(sink, e.email)));
    const byTo = Object.fromEntries(received.map((m) => [m.to[0], m.raw]));
    expect(byTo['p1@example.com']).toMatch(/^Subject: Welcome Pat/m);
    expect(byTo['p1@example.com']).toContain('Plan: pro');
    expect(byTo['p2@example.com']).toMatch(/^Subject: Welcome there/m);
    const override = await client.emails.send({
      body: { to: 'p1@example.com', template: templateId, subject: 'Explicit' },
    });
    const [overridden] = bodyOf(override, 200).data.emails;
    expect((await mailOf(sink, overridden?.email ?? 'nothing queued')).raw).toMatch(/^Subject: Explicit/m);
  });

  it('skips unsubscribed contacts for MARKETING content and sends nothing to them', async () => {
    const { auth, from } = await projectWithVerifiedDomain();
    const client = api(pigeon, auth);
    const template = bodyOf(
      await client.templates.create({ body: { name: 'Promo', subject: 'Sale', body: 'Sale', from } }),
      201,
    );
    expect(template.type).toBe('MARKETING');
    await client.contacts.create({ body: { email: 'off@example.com', subscribed: false } });
    const res = await client.emails.send({ body: { to: ['off@example.com'], template: template.id } });
    expect(bodyOf(res, 200).data).toMatchObject({
      emails: [],
      skipped: [{ contact: { email: 'off@example.com' }, reason: 'unsubscribed' }],
    });
  });

  it('refuses bad input with 422 before anything is stored or sent', async () => {
    const { auth, from, project } = await projectWithVerifiedDomain();
    const bad = [
      { to: 'a@example.com', from, body: 'no subject' },
      { to: 'a@example.com', from, subject: 'two\nlines', body: 'x' },
      { to: 'a@example.com', from, subject: 's', body: 'b', headers: { 'X-Evil': 'a\r\nBcc: victim@example.com' } },
      { to: 'a@example.com', from, subject: 's', body: 'b', headers: { 'X-Evil\r\nBcc': 'x' } },
      { to: 'a@example.com', from, subject: 's', body: 'b', headers: { 'Dkim-Signature': 'x' } },
      { to: 'a@example.com', from, subject: 's', body: 'b', headers: { 'X-Long': 'x'.repeat(999) } },
      { to: ['a@example.com', 'not-an-email'], from, subject: 's', body: 'b' },
      { to: 'a@example.com', from, subject: 'x'.repeat(999), body: 'b' },
      {
        to: 'a@example.com',
        from,
        subject: 's',
        body: 'b',
        attachments: Array.from({ length: 11 }, () => ({ filename: 'a.txt', content: 'YQ==' })),
      },
      {
        to: 'a@example.com',
        from,
        subject: 's',
        body: 'b',
        attachments: [{ filename: 'big.bin', content: 'A'.repeat(14 * 1024 * 1024) }],
      },
      { to: 'a@example.com', subject: 's', body: 'b' },
    ];
    for (const body of bad) {
      // Bad on purpose: several of these bodies do not fit the contract's types.
      // untyped: wrong on purpose (bodies the contract's types refuse)
      expectEnvelope(await pigeon.request('POST', '/v1/send', { headers: auth, body }), 422, 'VALIDATION_ERROR');
    }
    const rows = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT count(*)::int AS n FROM emails WHERE project_id = ${project.id}`,
    );
    expect(rows[0]?.n).toBe(0);
    expect(sink.messages.some((m) => m.raw.includes('victim@example.com'))).toBe(false);
  });

  it('sends attachments', async () => {
    const { auth, from } = await projectWithVerifiedDomain();
    const res = await api(pigeon, auth).emails.send({
      body: {
        to: 'att@example.com',
        from,
        subject: 's',
        body: 'b',
        attachments: [
          { filename: 'hello.txt', content: Buffer.from('hello world').toString('base64'), contentType: 'text/plain' },
        ],
      },
    });
    const message = await mailOf(sink, bodyOf(res, 200).data.emails[0]?.email ?? 'nothing queued');
    expect(message.raw).toMatch(/filename=hello\.txt/);
    expect(message.raw).toContain(Buffer.from('hello world').toString('base64'));
  });

  it('retries a temporary SMTP failure and marks a permanent one BOUNCED with an event', async () => {
    const { auth, from } = await projectWithVerifiedDomain();
    sink.failNext(451);
    const client = api(pigeon, auth);
    const retried = await client.emails.send({ body: { to: 't@example.com', from, subject: 'retry', body: 'b' } });
    const sent = await emailStatus(bodyOf(retried, 200).data.emails[0]?.email ?? 'nothing queued', ['SENT', 'FAILED']);
    expect(sent).toMatchObject({ status: 'SENT', attempts: 2 });
    sink.failNext(550);
    const bounced = await client.emails.send({ body: { to: 'b@example.com', from, subject: 'bounce', body: 'b' } });
    const [bounce] = bodyOf(bounced, 200).data.emails;
    expect(await emailStatus(bounce?.email ?? 'nothing queued', ['BOUNCED', 'SENT'])).toMatchObject({
      status: 'BOUNCED',
      attempts: 1,
    });
    expect(await eventNames(pigeon, bounce?.contact.id ?? 'nothing queued')).toContain('email.bounce');
  });

  it('answers a reused Idempotency-Key with 409 and sends once', async () => {
    const { auth, from, project } = await projectWithVerifiedDomain();
    const send = () =>
      api(pigeon, auth).emails.send({
        headers: { 'idempotency-key': 'send-1' },
        body: { to: 'i@example.com', from, subject: 's', body: 'b' },
      });
    expect((await send()).status).toBe(200);
    expectEnvelope(await send(), 409, 'IDEMPOTENCY_KEY_REUSED');
    const rows = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT count(*)::int AS n FROM emails WHERE project_id = ${project.id}`,
    );
    expect(rows[0]?.n).toBe(1);
  });

  it('answers a key reused with another body, or on another endpoint, with 422 and performs neither', async () => {
    const { auth, from, project } = await projectWithVerifiedDomain();
    const headers = { 'idempotency-key': 'send-other' };
    const first = { to: 'i@example.com', from, subject: 'first', body: 'b' };
    expect((await api(pigeon, auth).emails.send({ headers, body: first })).status).toBe(200);
    const other = expectEnvelope(
      await api(pigeon, auth).emails.send({ headers, body: { ...first, subject: 'second' } }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect(other.details).toMatchObject({
      key: 'send-other',
      originalRequest: 'POST /v1/send',
      originalStatusCode: 200,
    });
    expect(other.details).not.toHaveProperty('originalResponse');
    expectEnvelope(
      await api(pigeon, auth).emails.sendBatch({ headers, body: { messages: [first] } }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    // The same body again is a retry: 409 with the first answer.
    expectEnvelope(await api(pigeon, auth).emails.send({ headers, body: first }), 409, 'IDEMPOTENCY_KEY_REUSED');
    const rows = await queryRows<{ subject: string }>(
      pigeon.deps.db.pool,
      sql`SELECT subject FROM emails WHERE project_id = ${project.id}::uuid`,
    );
    expect(rows.map((r) => r.subject)).toEqual(['first']);
  });

  it('needs the secret key', async () => {
    const { project } = await newProject(pigeon);
    // The public key where the secret one belongs, with an empty body: both wrong on purpose.
    // untyped: wrong on purpose (the public key and an empty body)
    const res = await pigeon.request('POST', '/v1/send', {
      headers: { authorization: `Bearer ${project.publicKey}` },
      body: {},
    });
    expectEnvelope(res, 401, 'INVALID_API_KEY');
  });
});
