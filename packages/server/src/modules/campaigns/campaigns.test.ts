import { describe, expect, it } from 'vitest';
import { createTestDatabase, expectEnvelope, startTestPigeon } from '../../../test/helpers.js';
import { parseMessage } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { startSmtpSink } from '../../../test/smtp-sink.js';
import { until } from '../../../test/until.js';

const { pigeon, sink, dns } = await startMailingPigeon({ CAMPAIGN_DISPATCH_INTERVAL_MS: '100' });

type Setup = Awaited<ReturnType<typeof verifiedSender>>;
const campaign = (s: Setup, over: Record<string, unknown> = {}) => ({
  name: 'Spring sale',
  subject: 'Hi {{firstName ?? "there"}}',
  body: '<p>Hello {{firstName ?? "friend"}}, your plan is {{data.plan}}. <a href="https://shop.example/sale">Sale</a> {{unsubscribeUrl}}</p>',
  from: s.from,
  audienceType: 'ALL',
  ...over,
});

async function contacts(
  s: Setup,
  list: Array<{ email: string; subscribed?: boolean; data?: Record<string, unknown> }>,
) {
  for (const c of list)
    expect((await pigeon.request('POST', '/contacts', { headers: s.auth, body: c })).status).toBe(201);
}

const received = (to: string) => sink.messages.filter((m) => m.to.includes(to));

const get = async (s: Setup, id: string) => (await pigeon.request('GET', `/campaigns/${id}`, { headers: s.auth })).body;

describe('campaigns API', () => {
  it('creates a DRAFT in the success envelope; refuses missing fields, unverified senders and bad audiences', async () => {
    const s = await verifiedSender(pigeon, dns);
    const created = await pigeon.request('POST', '/campaigns', {
      headers: s.auth,
      body: campaign(s, { segmentId: null }),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      success: true,
      data: {
        status: 'DRAFT',
        type: 'MARKETING',
        audienceType: 'ALL',
        segmentId: null,
        totalRecipients: 0,
        sentCount: 0,
      },
    });
    const missing = await pigeon.request('POST', '/campaigns', {
      headers: s.auth,
      body: { name: 'x', audienceType: 'ALL' },
    });
    const fields = expectEnvelope(missing, 422, 'VALIDATION_ERROR').errors?.map((e) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['subject', 'body', 'from']));
    const unverified = await pigeon.request('POST', '/campaigns', {
      headers: s.auth,
      body: campaign(s, { from: 'x@unverified.example' }),
    });
    expect(expectEnvelope(unverified, 403, 'INTERNAL_SERVER_ERROR').details).toMatchObject({
      reason: 'DOMAIN_NOT_VERIFIED',
    });
    const noSegment = await pigeon.request('POST', '/campaigns', {
      headers: s.auth,
      body: campaign(s, { audienceType: 'SEGMENT' }),
    });
    expect(expectEnvelope(noSegment, 422, 'VALIDATION_ERROR').errors?.[0]?.field).toBe('segmentId');
    const badTree = await pigeon.request('POST', '/campaigns', {
      headers: s.auth,
      body: campaign(s, {
        audienceType: 'FILTERED',
        audienceCondition: { groups: [{ filters: [{ field: 'subscribed', operator: 'contains', value: 'x' }] }] },
      }),
    });
    expect(expectEnvelope(badTree, 400, 'INVALID_CONDITION').errors?.[0]?.field).toBe(
      'audienceCondition.groups.0.filters.0.operator',
    );
  });

  it('lists with pages, status filter (unknown → 400), search and sort fallback', async () => {
    const s = await verifiedSender(pigeon, dns);
    for (const name of ['Alpha', 'Beta', 'Gamma']) {
      await pigeon.request('POST', '/campaigns', { headers: s.auth, body: campaign(s, { name }) });
    }
    const page = await pigeon.request('GET', '/campaigns?pageSize=2&sort=name&dir=asc', { headers: s.auth });
    expect(page.body).toMatchObject({ page: 1, pageSize: 2, total: 3, totalPages: 2 });
    expect(page.body.data.map((c: { name: string }) => c.name)).toEqual(['Alpha', 'Beta']);
    const fallback = await pigeon.request('GET', '/campaigns?sort=bogus&dir=sideways', { headers: s.auth });
    expect(fallback.body.data.map((c: { name: string }) => c.name)).toEqual(['Gamma', 'Beta', 'Alpha']);
    const search = await pigeon.request('GET', '/campaigns?search=GAM', { headers: s.auth });
    expect(search.body.data.map((c: { name: string }) => c.name)).toEqual(['Gamma']);
    expect((await pigeon.request('GET', '/campaigns?status=SENT', { headers: s.auth })).body.total).toBe(0);
    expectEnvelope(await pigeon.request('GET', '/campaigns?status=DONE', { headers: s.auth }), 400, 'BAD_REQUEST');
  });

  it('sends to the frozen audience once each, rendered per contact at delivery; counts and stats follow', async () => {
    const s = await verifiedSender(pigeon, dns);
    await contacts(s, [
      { email: 'ann@c.example', data: { firstName: 'Ann', plan: 'pro' } },
      { email: 'bob@c.example', data: { plan: 'free' } },
      { email: 'out@c.example', subscribed: false, data: { firstName: 'Out' } },
    ]);
    const c = (await pigeon.request('POST', '/campaigns', { headers: s.auth, body: campaign(s) })).body.data;
    const sent = await pigeon.request('POST', `/campaigns/${c.id}/send`, { headers: s.auth, body: {} });
    expect(sent.body).toEqual({
      success: true,
      data: { id: c.id, name: 'Spring sale', status: 'SENDING', scheduledFor: expect.any(String), totalRecipients: 2 },
      message: expect.stringContaining('2 recipients'),
    });
    const done = await until(
      () => get(s, c.id),
      (x) => x.status === 'SENT',
    );
    expect(done).toMatchObject({ status: 'SENT', totalRecipients: 2, sentCount: 2, sentAt: expect.any(String) });
    const ann = parseMessage(received('ann@c.example')[0]?.raw ?? '');
    expect(ann.headers.get('subject')).toBe('Hi Ann');
    expect(ann.text).toContain('Hello Ann, your plan is pro.');
    expect(ann.text).toMatch(/\/t\/c\//); // tracked: MARKETING on a project that tracks
    expect(ann.headers.get('list-unsubscribe')).toMatch(/\/unsubscribe\//);
    expect(parseMessage(received('bob@c.example')[0]?.raw ?? '').text).toContain('Hello friend, your plan is free.');
    expect(received('out@c.example')).toHaveLength(0);
    const { rows } = await pigeon.deps.db.pool.query('SELECT html FROM emails WHERE campaign_id = $1', [c.id]);
    expect(rows.map((r) => r.html)).toEqual(['', '']); // no per-recipient HTML is stored
    const stats = await pigeon.request('GET', `/campaigns/${c.id}/stats`, { headers: s.auth });
    expect(stats.body).toMatchObject({ totalRecipients: 2, sent: 2, bounced: 0, cancelled: 0, pending: 0 });
    // Sending again is a conflict; a SENT campaign cannot be replaced; duplicating makes a new DRAFT.
    expectEnvelope(
      await pigeon.request('POST', `/campaigns/${c.id}/send`, { headers: s.auth, body: {} }),
      409,
      'CONFLICT',
    );
    expectEnvelope(
      await pigeon.request('PUT', `/campaigns/${c.id}`, { headers: s.auth, body: campaign(s) }),
      409,
      'CONFLICT',
    );
    const copy = await pigeon.request('POST', `/campaigns/${c.id}/duplicate`, { headers: s.auth });
    expect(copy.status).toBe(201);
    expect(copy.body.data).toMatchObject({ name: 'Spring sale (copy)', status: 'DRAFT', totalRecipients: 0 });
  });

  it('TRANSACTIONAL campaigns reach unsubscribed contacts; SEGMENT and FILTERED audiences are honoured', async () => {
    const s = await verifiedSender(pigeon, dns);
    await contacts(s, [
      { email: 'p1@t.example', subscribed: false, data: { plan: 'pro' } },
      { email: 'p2@t.example', data: { plan: 'pro' } },
      { email: 'f1@t.example', data: { plan: 'free' } },
    ]);
    const pro = { groups: [{ filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }] }] };
    const filtered = (
      await pigeon.request('POST', '/campaigns', {
        headers: s.auth,
        body: campaign(s, { name: 'Notice', type: 'TRANSACTIONAL', audienceType: 'FILTERED', audienceCondition: pro }),
      })
    ).body.data;
    const res = await pigeon.request('POST', `/campaigns/${filtered.id}/send`, { headers: s.auth });
    expect(res.body.data.totalRecipients).toBe(2);
    const segment = (
      await pigeon.request('POST', '/segments', { headers: s.auth, body: { name: 'Pro', condition: pro } })
    ).body;
    const bySegment = (
      await pigeon.request('POST', '/campaigns', {
        headers: s.auth,
        body: campaign(s, { audienceType: 'SEGMENT', segmentId: segment.id }),
      })
    ).body.data;
    // A segment used by a DRAFT campaign cannot be deleted.
    expectEnvelope(await pigeon.request('DELETE', `/segments/${segment.id}`, { headers: s.auth }), 409, 'CONFLICT');
    const seg = await pigeon.request('POST', `/campaigns/${bySegment.id}/send`, {
      headers: s.auth,
      body: { scheduledFor: null },
    });
    expect(seg.body.data.totalRecipients).toBe(1); // MARKETING: the unsubscribed pro is skipped
    await until(
      () => get(s, bySegment.id),
      (x) => x.status === 'SENT',
    );
    expect((await pigeon.request('DELETE', `/segments/${segment.id}`, { headers: s.auth })).status).toBe(204);
    await until(
      () => get(s, filtered.id),
      (x) => x.status === 'SENT',
    );
    expect(received('p1@t.example')).toHaveLength(1);
    expect(received('p2@t.example')).toHaveLength(2);
    expect(received('f1@t.example')).toHaveLength(0);
  });

  it('schedules for later (anything Date parses; unparseable → 400) and the dispatcher starts it when due', async () => {
    const s = await verifiedSender(pigeon, dns);
    await contacts(s, [{ email: 'later@c.example' }]);
    const c = (await pigeon.request('POST', '/campaigns', { headers: s.auth, body: campaign(s) })).body.data;
    const bad = await pigeon.request('POST', `/campaigns/${c.id}/send`, {
      headers: s.auth,
      body: { scheduledFor: 'next tuesday-ish' },
    });
    expectEnvelope(bad, 400, 'BAD_REQUEST');
    const at = new Date(Date.now() + 1500);
    const scheduled = await pigeon.request('POST', `/campaigns/${c.id}/send`, {
      headers: s.auth,
      body: { scheduledFor: at.toUTCString() },
    });
    expect(scheduled.body.data).toMatchObject({
      status: 'SCHEDULED',
      scheduledFor: new Date(at.toUTCString()).toISOString(),
    });
    expect((await get(s, c.id)).status).toBe('SCHEDULED');
    const upcoming = await pigeon.request('GET', '/activity/upcoming', { headers: s.auth });
    expect(upcoming.body.data).toEqual([
      {
        type: 'campaign',
        id: c.id,
        name: 'Spring sale',
        scheduledFor: scheduled.body.data.scheduledFor,
        audienceType: 'ALL',
      },
    ]);
    const done = await until(
      () => get(s, c.id),
      (x) => x.status === 'SENT',
    );
    expect(done.status).toBe('SENT');
    expect(received('later@c.example')).toHaveLength(1);
  });

  it('cancels mid-send: what was not handed to the transport is never sent', async () => {
    const s = await verifiedSender(pigeon, dns);
    await pigeon.request('PATCH', `/users/@me/projects/${s.project.id}`, {
      headers: { cookie: s.owner.cookie },
      body: { campaignSendRate: 5 },
    });
    await contacts(
      s,
      Array.from({ length: 40 }, (_, i) => ({ email: `slow${i}@c.example` })),
    );
    const c = (await pigeon.request('POST', '/campaigns', { headers: s.auth, body: campaign(s) })).body.data;
    await pigeon.request('POST', `/campaigns/${c.id}/send`, { headers: s.auth });
    const before = () => sink.messages.filter((m) => m.to.some((t) => t.startsWith('slow'))).length;
    await until(before, (n) => n >= 5);
    expectEnvelope(await pigeon.request('DELETE', `/campaigns/${c.id}`, { headers: s.auth }), 409, 'CONFLICT');
    const cancel = await pigeon.request('POST', `/campaigns/${c.id}/cancel`, { headers: s.auth });
    const atAnswer = before();
    expect(cancel.body).toMatchObject({ success: true, data: { status: 'CANCELLED' } });
    const { sent, cancelled } = cancel.body.data;
    expect(cancelled).toBeGreaterThan(0); // cancelled mid-send (40 spread over 8 s, cancelled after 5)
    // The answer waits for what workers had claimed: what they were handing over has arrived and is
    // counted in `sent`; the rest was dropped. Nothing reaches the relay after the answer.
    expect(atAnswer).toBe(sent);
    await new Promise((r) => setTimeout(r, 1500));
    const stats = (await pigeon.request('GET', `/campaigns/${c.id}/stats`, { headers: s.auth })).body;
    expect(stats.pending).toBe(0);
    expect(stats.sent + stats.cancelled).toBe(40);
    expect(before()).toBe(atAnswer);
    expect(stats.sent).toBe(sent);
    expect((await get(s, c.id)).status).toBe('CANCELLED');
    expectEnvelope(await pigeon.request('POST', `/campaigns/${c.id}/cancel`, { headers: s.auth }), 409, 'CONFLICT');
    expect((await pigeon.request('DELETE', `/campaigns/${c.id}`, { headers: s.auth })).status).toBe(204);
  });

  it('test sends once with the contact’s data and moves no counter; template usage and 404s across projects', async () => {
    const s = await verifiedSender(pigeon, dns);
    await contacts(s, [{ email: 'tester@c.example', data: { firstName: 'Tess', plan: 'pro' } }]);
    const template = await pigeon.request('POST', '/templates', {
      headers: s.auth,
      body: { name: 'Base', subject: 's', body: '<p>b</p>', from: s.from },
    });
    const c = (
      await pigeon.request('POST', '/campaigns', {
        headers: s.auth,
        body: campaign(s, { templateId: template.body.id }),
      })
    ).body.data;
    const test = await pigeon.request('POST', `/campaigns/${c.id}/test`, {
      headers: s.auth,
      body: { email: 'Tester@c.example' },
    });
    expect(test.body).toMatchObject({ success: true, data: { email: 'tester@c.example' } });
    const mail = await until(
      () => received('tester@c.example'),
      (m) => m.length > 0,
    );
    expect(parseMessage(mail[0]?.raw ?? '').headers.get('subject')).toBe('Hi Tess');
    expect(await get(s, c.id)).toMatchObject({ status: 'DRAFT', sentCount: 0, totalRecipients: 0 });
    const usage = await pigeon.request('GET', `/templates/${template.body.id}/usage`, { headers: s.auth });
    expect(usage.body.campaigns).toEqual([{ id: c.id, name: 'Spring sale' }]);
    const other = await verifiedSender(pigeon, dns);
    for (const [method, path] of [
      ['GET', `/campaigns/${c.id}`],
      ['PUT', `/campaigns/${c.id}`],
      ['DELETE', `/campaigns/${c.id}`],
      ['POST', `/campaigns/${c.id}/send`],
      ['POST', `/campaigns/${c.id}/cancel`],
      ['GET', `/campaigns/${c.id}/stats`],
      ['POST', `/campaigns/${c.id}/duplicate`],
    ] as const) {
      const body = method === 'PUT' ? campaign(other) : undefined;
      expectEnvelope(await pigeon.request(method, path, { headers: other.auth, body }), 404, 'NOT_FOUND');
    }
  });
});

describe('campaign delivery', () => {
  it('a scheduled campaign survives a restart and is sent exactly once by two workers', async () => {
    const databaseUrl = await createTestDatabase();
    const env = { SMTP_URL: sink.url, DNS_SERVERS: dns.address, CAMPAIGN_DISPATCH_INTERVAL_MS: '50' };
    const first = await startTestPigeon({ databaseUrl, env });
    let id = '';
    let auth: Record<string, string> = {};
    try {
      const s = await verifiedSender(first, dns);
      auth = s.auth;
      await first.request('POST', '/contacts', { headers: s.auth, body: { email: 'restart@c.example' } });
      const c = (await first.request('POST', '/campaigns', { headers: s.auth, body: campaign(s) })).body.data;
      id = c.id;
      const due = new Date(Date.now() + 2000).toISOString();
      const res = await first.request('POST', `/campaigns/${c.id}/send`, {
        headers: s.auth,
        body: { scheduledFor: due },
      });
      expect(res.body.data.status).toBe('SCHEDULED');
    } finally {
      await first.stop();
    }
    const [a, b] = await Promise.all([startTestPigeon({ databaseUrl, env }), startTestPigeon({ databaseUrl, env })]);
    try {
      const done = await until(
        async () => (await a.request('GET', `/campaigns/${id}`, { headers: auth })).body,
        (x) => x.status === 'SENT',
      );
      expect(done.totalRecipients).toBe(1);
      await new Promise((r) => setTimeout(r, 300));
      expect(received('restart@c.example')).toHaveLength(1);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('a transactional send overtakes a draining campaign', async () => {
    const slowSink = await startSmtpSink({ delayMs: 20 });
    const slow = await startTestPigeon({
      databaseUrl: undefined,
      // One delivery loop: the order of its claims is the order at the relay (see below).
      env: { SMTP_URL: slowSink.url, DNS_SERVERS: dns.address, DELIVERY_CONCURRENCY: '1' },
    });
    try {
      const s = await verifiedSender(slow, dns);
      await slow.deps.db.pool.query(
        `INSERT INTO contacts (id, project_id, email, subscribed)
         SELECT uuidv7_compat(), $1, 'bulk' || i || '@c.example', true FROM generate_series(1, 2000) AS i`,
        [s.project.id],
      );
      const c = (await slow.request('POST', '/campaigns', { headers: s.auth, body: campaign(s) })).body.data;
      expect(
        (await slow.request('POST', `/campaigns/${c.id}/send`, { headers: s.auth })).body.data.totalRecipients,
      ).toBe(2000);
      await until(
        () => slowSink.messages.length,
        (n) => n >= 20,
      );
      const send = await slow.request('POST', '/v1/send', {
        headers: s.auth,
        body: { to: 'urgent@c.example', from: s.from, subject: 'Your code', body: '<p>123456</p>' },
      });
      expect(send.status).toBe(200);
      const queuedAt = slowSink.messages.length;
      const urgent = () => slowSink.messages.findIndex((m) => m.to.includes('urgent@c.example'));
      expect(await until(urgent, (i) => i >= 0, 30_000)).toBeGreaterThanOrEqual(0);
      // Queued, it is in the first claim made after its commit, and first in that batch: only the
      // batch the loop held or was claiming then (at most 10) can reach the relay ahead of it,
      // however slow the machine. (With several loops, another loop's batch claimed while this one
      // composes the urgent mail may also go first: claim order is the promise, not relay order.)
      expect(urgent() - queuedAt).toBeLessThanOrEqual(10);
      const stats = (await slow.request('GET', `/campaigns/${c.id}/stats`, { headers: s.auth })).body;
      expect(stats.pending).toBeGreaterThan(1000); // the campaign was still draining
      await slow.request('POST', `/campaigns/${c.id}/cancel`, { headers: s.auth });
    } finally {
      await slow.stop();
      await slowSink.close();
    }
    // It starts a Pigeon of its own: set-up a beforeAll would get hookTimeout (60 s) for, and
    // which took up to 13 s of the default 30 s on a machine loaded ten times over.
  }, 60_000);

  it('a contact who unsubscribes after the audience froze gets no MARKETING campaign mail', async () => {
    const s = await verifiedSender(pigeon, dns);
    await pigeon.request('PATCH', `/users/@me/projects/${s.project.id}`, {
      headers: { cookie: s.owner.cookie },
      body: { campaignSendRate: 2 },
    });
    await contacts(s, [{ email: 'first@u.example' }, { email: 'second@u.example' }]);
    const c = (await pigeon.request('POST', '/campaigns', { headers: s.auth, body: campaign(s) })).body.data;
    await pigeon.request('POST', `/campaigns/${c.id}/send`, { headers: s.auth });
    const { rows } = await pigeon.deps.db.pool.query(
      `SELECT c.id, c.email FROM emails e JOIN contacts c ON c.id = e.contact_id WHERE e.campaign_id = $1 ORDER BY e.next_attempt_at`,
      [c.id],
    );
    const last = rows[1];
    await pigeon.request('PATCH', `/contacts/${last.id}`, { headers: s.auth, body: { subscribed: false } });
    const done = await until(
      () => get(s, c.id),
      (x) => x.status === 'SENT',
    );
    expect(done.sentCount).toBe(1);
    expect(received(last.email)).toHaveLength(0);
    const stats = (await pigeon.request('GET', `/campaigns/${c.id}/stats`, { headers: s.auth })).body;
    expect(stats).toMatchObject({ sent: 1, cancelled: 1 });
  });
});
