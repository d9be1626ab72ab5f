import { Resolver } from 'node:dns/promises';
import { authenticate } from 'mailauth';
import { describe, expect, it } from 'vitest';
import { eventNames, newProject } from '../../../test/accounts.js';
import { expectEnvelope, startTestPigeon } from '../../../test/helpers.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';

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
    const { rows } = await pigeon.deps.db.pool.query('SELECT status, attempts FROM emails WHERE id = $1', [id]);
    if (until.includes(rows[0]?.status) || Date.now() > deadline) return rows[0];
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('sender domains', () => {
  it('returns DKIM, SPF and DMARC records and verifies only when DNS publishes our DKIM key', async () => {
    const { auth, project } = await newProject(pigeon);
    const res = await pigeon.request('POST', '/domains', { headers: auth, body: { domain: 'Pending.Example.org' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ domain: 'pending.example.org', status: 'pending', note: null });
    const [dkim, spf, dmarc] = res.body.records;
    expect(dkim).toMatchObject({
      type: 'TXT',
      purpose: 'dkim',
      required: true,
      name: `${res.body.dkimSelector}._domainkey.pending.example.org`,
    });
    expect(dkim.value).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]{300,}$/);
    expect(spf).toMatchObject({
      purpose: 'spf',
      name: 'pending.example.org',
      value: expect.stringMatching(/^v=spf1 /),
    });
    expect(dmarc).toMatchObject({ purpose: 'dmarc', name: '_dmarc.pending.example.org' });

    const missing = await pigeon.request('GET', `/domains/${res.body.id}/verify`, { headers: auth });
    expect(missing.body).toMatchObject({
      status: 'pending',
      records: [{ status: 'missing' }, { status: 'missing' }, { status: 'missing' }],
    });
    dns.setTxt(dkim.name, 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwrong');
    const mismatch = await pigeon.request('GET', `/domains/${res.body.id}/verify`, { headers: auth });
    expect(mismatch.body.records[0].status).toBe('mismatch');
    expect(mismatch.body.status).toBe('pending');
    dns.setTxt(dkim.name, dkim.value);
    dns.setTxt(spf.name, spf.value);
    const verified = await pigeon.request('GET', `/domains/${res.body.id}/verify`, { headers: auth });
    expect(verified.body).toMatchObject({ status: 'verified', verifiedAt: expect.any(String) });
    expect(verified.body.records.map((r: { status: string }) => r.status)).toEqual(['verified', 'verified', 'missing']);

    const list = await pigeon.request('GET', `/domains/project/${project.id}`, { headers: auth });
    expect(list.body.map((d: { domain: string }) => d.domain)).toEqual(['pending.example.org']);
    const other = await newProject(pigeon);
    expectEnvelope(
      await pigeon.request('GET', `/domains/project/${project.id}`, { headers: other.auth }),
      404,
      'NOT_FOUND',
    );
    // Another project adding the verified domain learns nothing: the answer is that of a domain
    // nobody has (pending, no note), and it stays pending while only the first project's key is published.
    const taken = await pigeon.request('POST', '/domains', {
      headers: other.auth,
      body: { domain: 'pending.example.org' },
    });
    const unknown = await pigeon.request('POST', '/domains', {
      headers: other.auth,
      body: { domain: 'nobody-has-this.example.org' },
    });
    expect(taken.status).toBe(201);
    expect(unknown.status).toBe(201);
    const shape = (d: Record<string, unknown>) => ({
      keys: Object.keys(d).sort(),
      status: d.status,
      note: d.note,
      verifiedAt: d.verifiedAt,
      records: (d.records as Array<{ status: string }>).map((r) => r.status),
    });
    expect(shape(taken.body)).toEqual(shape(unknown.body));
    const recheck = await pigeon.request('GET', `/domains/${taken.body.id}/verify`, { headers: other.auth });
    expect(recheck.body).toMatchObject({ status: 'pending', verifiedAt: null });
  });

  it('refuses invalid domain names with 422', async () => {
    const { auth } = await newProject(pigeon);
    for (const domain of ['localhost', 'exa mple.com', '-bad.com', 'a..b.com']) {
      expectEnvelope(
        await pigeon.request('POST', '/domains', { headers: auth, body: { domain } }),
        422,
        'VALIDATION_ERROR',
      );
    }
  });

  it('verifies a domain at once with the local outbox, and says why', async () => {
    const outbox = await startTestPigeon({ databaseUrl: pigeon.deps.db.url, role: 'api' });
    try {
      const { auth } = await newProject(outbox);
      const res = await outbox.request('POST', '/domains', { headers: auth, body: { domain: 'outbox.example.net' } });
      expect(res.body).toMatchObject({ status: 'verified', note: expect.stringContaining('local outbox') });
    } finally {
      await outbox.stop();
    }
  });
});

describe('POST /v1/send', () => {
  it('refuses a sender on an unverified domain with 403 and the reason', async () => {
    const { auth } = await newProject(pigeon);
    const res = await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: { to: 'a@example.com', from: 'me@unverified.example', subject: 'Hi', body: '<p>x</p>' },
    });
    const error = expectEnvelope(res, 403, 'INTERNAL_SERVER_ERROR');
    expect(error.details).toEqual({ reason: 'DOMAIN_NOT_VERIFIED', domain: 'unverified.example' });
    expect(error.suggestion).toContain('POST /domains');
  });

  it('delivers a DKIM-signed message that passes verification, aligned with the From domain', async () => {
    const { auth, from, domain } = await projectWithVerifiedDomain();
    const before = sink.messages.length;
    const res = await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: {
        to: { name: 'Ada L', email: 'Ada@Example.com' },
        from: { name: 'Team', email: from },
        subject: 'Hello {{name ?? "friend"}}',
        body: '<p>Hi {{name}} &amp; {{missing}}</p>',
        data: { name: 'Ada <3' },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      emails: [{ contact: { email: 'ada@example.com' }, email: expect.any(String) }],
      skipped: [],
    });
    const [message] = (await sink.waitFor(before + 1)).slice(before);
    expect(message?.to).toEqual(['ada@example.com']);
    expect(message?.raw).toMatch(/^Subject: Hello Ada <3/m);
    expect(message?.raw).toContain('Hi Ada &#60;3 &amp; </p>'); // variables escaped; the template's own HTML kept
    expect(message?.raw).toMatch(/Content-Type: text\/plain/);
    const result = await authenticate(message?.raw ?? '', {
      ip: '127.0.0.1',
      helo: 'localhost',
      sender: from,
      resolver: dnsResolver(),
    });
    const dkim = result.dkim.results[0];
    expect(dkim?.status.result).toBe('pass');
    expect(dkim?.signingDomain).toBe(domain);
    const email = await emailStatus(res.body.data.emails[0].email, ['SENT']);
    expect(email?.status).toBe('SENT');
    expect(await eventNames(pigeon, res.body.data.emails[0].contact.id)).toContain('email.sent');
  });

  it('creates new contacts unsubscribed unless told, and records a subscription change', async () => {
    const { auth, from } = await projectWithVerifiedDomain();
    const first = await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: { to: 'n@example.com', from, subject: 's', body: 'b' },
    });
    const id = first.body.data.emails[0].contact.id;
    expect((await pigeon.request('GET', `/contacts/${id}`, { headers: auth })).body.subscribed).toBe(false);
    await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: { to: 'n@example.com', from, subject: 's', body: 'b', subscribed: true },
    });
    expect((await pigeon.request('GET', `/contacts/${id}`, { headers: auth })).body.subscribed).toBe(true);
    expect(await eventNames(pigeon, id)).toContain('contact.subscribed');
  });

  it('sends to each recipient of an array with its own rendering, and uses template content with overrides', async () => {
    const { auth, from } = await projectWithVerifiedDomain();
    const template = await pigeon.request('POST', '/templates', {
      headers: auth,
      body: {
        name: 'Welcome',
        subject: 'Welcome {{first ?? "there"}}',
        body: '<p>Plan: {{plan}}</p>',
        from,
        type: 'TRANSACTIONAL',
      },
    });
    expect(template.status).toBe(201);
    await pigeon.request('POST', '/contacts', {
      headers: auth,
      body: { email: 'p1@example.com', data: { first: 'Pat', plan: 'pro' } },
    });
    const before = sink.messages.length;
    const res = await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: { to: ['p1@example.com', 'p2@example.com'], template: template.body.id },
    });
    expect(res.body.data.emails).toHaveLength(2);
    const received = (await sink.waitFor(before + 2)).slice(before);
    const byTo = Object.fromEntries(received.map((m) => [m.to[0], m.raw]));
    expect(byTo['p1@example.com']).toMatch(/^Subject: Welcome Pat/m);
    expect(byTo['p1@example.com']).toContain('Plan: pro');
    expect(byTo['p2@example.com']).toMatch(/^Subject: Welcome there/m);
    const override = await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: { to: 'p1@example.com', template: template.body.id, subject: 'Explicit' },
    });
    await sink.waitFor(before + 3);
    expect(sink.messages.at(-1)?.raw).toMatch(/^Subject: Explicit/m);
    expect(override.status).toBe(200);
  });

  it('skips unsubscribed contacts for MARKETING content and sends nothing to them', async () => {
    const { auth, from } = await projectWithVerifiedDomain();
    const template = await pigeon.request('POST', '/templates', {
      headers: auth,
      body: { name: 'Promo', subject: 'Sale', body: 'Sale', from },
    });
    expect(template.body.type).toBe('MARKETING');
    await pigeon.request('POST', '/contacts', { headers: auth, body: { email: 'off@example.com', subscribed: false } });
    const res = await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: { to: ['off@example.com'], template: template.body.id },
    });
    expect(res.body.data).toMatchObject({
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
      expectEnvelope(await pigeon.request('POST', '/v1/send', { headers: auth, body }), 422, 'VALIDATION_ERROR');
    }
    const { rows } = await pigeon.deps.db.pool.query('SELECT count(*)::int AS n FROM emails WHERE project_id = $1', [
      project.id,
    ]);
    expect(rows[0].n).toBe(0);
    expect(sink.messages.some((m) => m.raw.includes('victim@example.com'))).toBe(false);
  });

  it('sends attachments', async () => {
    const { auth, from } = await projectWithVerifiedDomain();
    const before = sink.messages.length;
    await pigeon.request('POST', '/v1/send', {
      headers: auth,
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
    const [message] = (await sink.waitFor(before + 1)).slice(before);
    expect(message?.raw).toMatch(/filename=hello\.txt/);
    expect(message?.raw).toContain(Buffer.from('hello world').toString('base64'));
  });

  it('retries a temporary SMTP failure and marks a permanent one BOUNCED with an event', async () => {
    const { auth, from } = await projectWithVerifiedDomain();
    sink.failNext(451);
    const retried = await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: { to: 't@example.com', from, subject: 'retry', body: 'b' },
    });
    const sent = await emailStatus(retried.body.data.emails[0].email, ['SENT', 'FAILED']);
    expect(sent).toMatchObject({ status: 'SENT', attempts: 2 });
    sink.failNext(550);
    const bounced = await pigeon.request('POST', '/v1/send', {
      headers: auth,
      body: { to: 'b@example.com', from, subject: 'bounce', body: 'b' },
    });
    expect(await emailStatus(bounced.body.data.emails[0].email, ['BOUNCED', 'SENT'])).toMatchObject({
      status: 'BOUNCED',
      attempts: 1,
    });
    expect(await eventNames(pigeon, bounced.body.data.emails[0].contact.id)).toContain('email.bounce');
  });

  it('answers a reused Idempotency-Key with 409 and sends once', async () => {
    const { auth, from, project } = await projectWithVerifiedDomain();
    const headers = { ...auth, 'idempotency-key': 'send-1' };
    const body = { to: 'i@example.com', from, subject: 's', body: 'b' };
    expect((await pigeon.request('POST', '/v1/send', { headers, body })).status).toBe(200);
    expectEnvelope(await pigeon.request('POST', '/v1/send', { headers, body }), 409, 'IDEMPOTENCY_KEY_REUSED');
    const { rows } = await pigeon.deps.db.pool.query('SELECT count(*)::int AS n FROM emails WHERE project_id = $1', [
      project.id,
    ]);
    expect(rows[0].n).toBe(1);
  });

  it('needs the secret key', async () => {
    const { project } = await newProject(pigeon);
    const res = await pigeon.request('POST', '/v1/send', {
      headers: { authorization: `Bearer ${project.publicKey}` },
      body: {},
    });
    expectEnvelope(res, 401, 'INVALID_API_KEY');
  });
});
