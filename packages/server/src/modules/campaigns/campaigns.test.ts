import type { contract } from '@pigeon/contract';
import type { ClientInferRequest } from '@ts-rest/core';
import { describe, expect, it } from 'vitest';
import { api, bodyOf } from '../../../test/api.js';
import { addresses, campaignToAll } from '../../../test/campaigns.js';
import { insertManyContacts } from '../../../test/fixtures/contacts.js';
import { createTestDatabase, expectEnvelope, startTestPigeon } from '../../../test/helpers.js';
import { parseMessage } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { startSmtpSink } from '../../../test/smtp-sink.js';
import { until } from '../../../test/until.js';
import { queryRows, sql } from '../../db/query.js';

const { pigeon, sink, dns } = await startMailingPigeon({ CAMPAIGN_DISPATCH_INTERVAL_MS: '100' });

type Setup = Awaited<ReturnType<typeof verifiedSender>>;
type CampaignBody = ClientInferRequest<typeof contract.campaigns.create>['body'];
const content = {
  name: 'Spring sale',
  subject: 'Hi {{firstName ?? "there"}}',
  body: '<p>Hello {{firstName ?? "friend"}}, your plan is {{data.plan}}. <a href="https://shop.example/sale">Sale</a> {{unsubscribeUrl}}</p>',
};
const campaign = (s: Setup, over: Partial<CampaignBody> = {}): CampaignBody => ({
  ...content,
  from: s.from,
  audienceType: 'ALL',
  ...over,
});

async function contacts(
  s: Setup,
  list: Array<{ email: string; subscribed?: boolean; data?: Record<string, unknown> }>,
) {
  for (const c of list) expect((await api(pigeon, s.auth).contacts.create({ body: c })).status).toBe(201);
}

const received = (to: string) => sink.messages.filter((m) => m.to.includes(to));

const get = async (s: Setup, id: string) => bodyOf(await api(pigeon, s.auth).campaigns.get({ params: { id } }), 200);

/**
 * A campaign sent to `count` new contacts `<prefix><i>@c.example` of a project sending 5 campaign
 * messages a second, so that it drains over count ÷ 5 seconds; `out` counts what reached the sink.
 */
async function pacedCampaign(prefix: string, count: number) {
  const s = await verifiedSender(pigeon, dns);
  const run = await campaignToAll(pigeon, s, addresses(prefix, count, 'c.example'), { sendRate: 5, campaign: content });
  await run.send();
  const out = () => sink.messages.filter((m) => m.to.some((t) => t.startsWith(prefix))).length;
  return { s, c: run.campaign, out };
}

describe('campaigns API', () => {
  it('creates a DRAFT in the success envelope; refuses missing fields, unverified senders and bad audiences', async () => {
    const s = await verifiedSender(pigeon, dns);
    const created = await api(pigeon, s.auth).campaigns.create({ body: campaign(s, { segmentId: null }) });
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
    // untyped: wrong on purpose (a body the contract's types refuse)
    const missing = await pigeon.request('POST', '/campaigns', {
      headers: s.auth,
      body: { name: 'x', audienceType: 'ALL' },
    });
    const fields = expectEnvelope(missing, 422, 'VALIDATION_ERROR').errors?.map((e) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['subject', 'body', 'from']));
    const unverified = await api(pigeon, s.auth).campaigns.create({
      body: campaign(s, { from: 'x@unverified.example' }),
    });
    expect(expectEnvelope(unverified, 403, 'INTERNAL_SERVER_ERROR').details).toMatchObject({
      reason: 'DOMAIN_NOT_VERIFIED',
    });
    const noSegment = await api(pigeon, s.auth).campaigns.create({ body: campaign(s, { audienceType: 'SEGMENT' }) });
    expect(expectEnvelope(noSegment, 422, 'VALIDATION_ERROR').errors?.[0]?.field).toBe('segmentId');
    const badTree = await api(pigeon, s.auth).campaigns.create({
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
      await api(pigeon, s.auth).campaigns.create({ body: campaign(s, { name }) });
    }
    const page = await api(pigeon, s.auth).campaigns.list({ query: { pageSize: 2, sort: 'name', dir: 'asc' } });
    expect(page.body).toMatchObject({ page: 1, pageSize: 2, total: 3, totalPages: 2 });
    expect(bodyOf(page, 200).data.map((c: { name: string }) => c.name)).toEqual(['Alpha', 'Beta']);
    const fallback = await api(pigeon, s.auth).campaigns.list({ query: { sort: 'bogus', dir: 'sideways' } });
    expect(bodyOf(fallback, 200).data.map((c: { name: string }) => c.name)).toEqual(['Gamma', 'Beta', 'Alpha']);
    const search = await api(pigeon, s.auth).campaigns.list({ query: { search: 'GAM' } });
    expect(bodyOf(search, 200).data.map((c: { name: string }) => c.name)).toEqual(['Gamma']);
    expect(bodyOf(await api(pigeon, s.auth).campaigns.list({ query: { status: 'SENT' } }), 200).total).toBe(0);
    expectEnvelope(await api(pigeon, s.auth).campaigns.list({ query: { status: 'DONE' } }), 400, 'BAD_REQUEST');
  });

  it('sends to the frozen audience once each, rendered per contact at delivery; counts and stats follow', async () => {
    const s = await verifiedSender(pigeon, dns);
    await contacts(s, [
      { email: 'ann@c.example', data: { firstName: 'Ann', plan: 'pro' } },
      { email: 'bob@c.example', data: { plan: 'free' } },
      { email: 'out@c.example', subscribed: false, data: { firstName: 'Out' } },
    ]);
    const c = bodyOf(await api(pigeon, s.auth).campaigns.create({ body: campaign(s) }), 201).data;
    const sent = await api(pigeon, s.auth).campaigns.send({ params: { id: c.id }, body: {} });
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
    const rows = await queryRows(pigeon.deps.db.pool, sql`SELECT html FROM emails WHERE campaign_id = ${c.id}`);
    expect(rows.map((r) => r.html)).toEqual(['', '']); // no per-recipient HTML is stored
    const stats = await api(pigeon, s.auth).campaigns.stats({ params: { id: c.id } });
    expect(stats.body).toMatchObject({ totalRecipients: 2, sent: 2, bounced: 0, cancelled: 0, pending: 0 });
    // Sending again is a conflict; a SENT campaign cannot be replaced; duplicating makes a new DRAFT.
    expectEnvelope(await api(pigeon, s.auth).campaigns.send({ params: { id: c.id }, body: {} }), 409, 'CONFLICT');
    expectEnvelope(
      await api(pigeon, s.auth).campaigns.replace({ params: { id: c.id }, body: campaign(s) }),
      409,
      'CONFLICT',
    );
    const copy = await api(pigeon, s.auth).campaigns.duplicate({ params: { id: c.id } });
    expect(copy.status).toBe(201);
    expect(bodyOf(copy, 201).data).toMatchObject({ name: 'Spring sale (copy)', status: 'DRAFT', totalRecipients: 0 });
  });

  it('TRANSACTIONAL campaigns reach unsubscribed contacts; SEGMENT and FILTERED audiences are honoured', async () => {
    const s = await verifiedSender(pigeon, dns);
    await contacts(s, [
      { email: 'p1@t.example', subscribed: false, data: { plan: 'pro' } },
      { email: 'p2@t.example', data: { plan: 'pro' } },
      { email: 'f1@t.example', data: { plan: 'free' } },
    ]);
    const pro = { groups: [{ filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }] }] };
    const filtered = bodyOf(
      await api(pigeon, s.auth).campaigns.create({
        body: campaign(s, { name: 'Notice', type: 'TRANSACTIONAL', audienceType: 'FILTERED', audienceCondition: pro }),
      }),
      201,
    ).data;
    const res = await api(pigeon, s.auth).campaigns.send({ params: { id: filtered.id }, body: undefined });
    expect(bodyOf(res, 200).data.totalRecipients).toBe(2);
    const segment = bodyOf(await api(pigeon, s.auth).segments.create({ body: { name: 'Pro', condition: pro } }), 201);
    const bySegment = bodyOf(
      await api(pigeon, s.auth).campaigns.create({
        body: campaign(s, { audienceType: 'SEGMENT', segmentId: segment.id }),
      }),
      201,
    ).data;
    // A segment used by a DRAFT campaign cannot be deleted.
    expectEnvelope(await api(pigeon, s.auth).segments.delete({ params: { id: segment.id } }), 409, 'CONFLICT');
    const seg = await api(pigeon, s.auth).campaigns.send({
      params: { id: bySegment.id },
      body: { scheduledFor: null },
    });
    expect(bodyOf(seg, 200).data.totalRecipients).toBe(1); // MARKETING: the unsubscribed pro is skipped
    await until(
      () => get(s, bySegment.id),
      (x) => x.status === 'SENT',
    );
    expect((await api(pigeon, s.auth).segments.delete({ params: { id: segment.id } })).status).toBe(204);
    await until(
      () => get(s, filtered.id),
      (x) => x.status === 'SENT',
    );
    expect(received('p1@t.example')).toHaveLength(1);
    expect(received('p2@t.example')).toHaveLength(2);
    expect(received('f1@t.example')).toHaveLength(0);
  });

  it('counts an audience before sending as sending freezes it; refused as a campaign with that audience would be', async () => {
    const s = await verifiedSender(pigeon, dns);
    await contacts(s, [
      { email: 'p1@n.example', subscribed: false, data: { plan: 'pro' } },
      { email: 'p2@n.example', data: { plan: 'pro' } },
      { email: 'f1@n.example', data: { plan: 'free' } },
    ]);
    const pro = { groups: [{ filters: [{ field: 'data.plan', operator: 'equals' as const, value: 'pro' }] }] };
    const count = async (body: Parameters<ReturnType<typeof api>['campaigns']['audienceCount']>[0]['body']) =>
      bodyOf(await api(pigeon, s.auth).campaigns.audienceCount({ body }), 200).count;
    expect(await count({ audienceType: 'ALL' })).toBe(2); // MARKETING by default: the unsubscribed one is left out
    expect(await count({ audienceType: 'ALL', type: 'TRANSACTIONAL' })).toBe(3);
    expect(await count({ audienceType: 'FILTERED', audienceCondition: pro })).toBe(1);
    expect(await count({ audienceType: 'FILTERED', audienceCondition: pro, type: 'TRANSACTIONAL' })).toBe(2);
    const segment = bodyOf(await api(pigeon, s.auth).segments.create({ body: { name: 'Pro', condition: pro } }), 201);
    expect(await count({ audienceType: 'SEGMENT', segmentId: segment.id })).toBe(1);
    const sent = bodyOf(
      await api(pigeon, s.auth).campaigns.create({
        body: campaign(s, { audienceType: 'SEGMENT', segmentId: segment.id }),
      }),
      201,
    ).data;
    const frozen = await api(pigeon, s.auth).campaigns.send({ params: { id: sent.id }, body: undefined });
    expect(bodyOf(frozen, 200).data.totalRecipients).toBe(1);
    const client = api(pigeon, s.auth).campaigns;
    expectEnvelope(await client.audienceCount({ body: { audienceType: 'SEGMENT' } }), 422, 'VALIDATION_ERROR');
    expectEnvelope(await client.audienceCount({ body: { audienceType: 'FILTERED' } }), 422, 'VALIDATION_ERROR');
    const other = await verifiedSender(pigeon, dns);
    expectEnvelope(
      await api(pigeon, other.auth).campaigns.audienceCount({
        body: { audienceType: 'SEGMENT', segmentId: segment.id },
      }),
      422,
      'VALIDATION_ERROR',
    );
    const badField = { groups: [{ filters: [{ field: 'nope', operator: 'equals' as const, value: 1 }] }] };
    const bad = await client.audienceCount({ body: { audienceType: 'FILTERED', audienceCondition: badField } });
    expect(expectEnvelope(bad, 400, 'INVALID_CONDITION').errors?.[0]?.field).toMatch(/^audienceCondition\./);
  });

  it('schedules for later (anything Date parses; unparseable → 400) and the dispatcher starts it when due', async () => {
    const s = await verifiedSender(pigeon, dns);
    await contacts(s, [{ email: 'later@c.example' }]);
    const c = bodyOf(await api(pigeon, s.auth).campaigns.create({ body: campaign(s) }), 201).data;
    const bad = await api(pigeon, s.auth).campaigns.send({
      params: { id: c.id },
      body: { scheduledFor: 'next tuesday-ish' },
    });
    expectEnvelope(bad, 400, 'BAD_REQUEST');
    const at = new Date(Date.now() + 1500);
    const scheduled = await api(pigeon, s.auth).campaigns.send({
      params: { id: c.id },
      body: { scheduledFor: at.toUTCString() },
    });
    expect(bodyOf(scheduled, 200).data).toMatchObject({
      status: 'SCHEDULED',
      scheduledFor: new Date(at.toUTCString()).toISOString(),
    });
    expect((await get(s, c.id)).status).toBe('SCHEDULED');
    const upcoming = await api(pigeon, s.auth).activity.upcoming();
    expect(bodyOf(upcoming, 200).data).toEqual([
      {
        type: 'campaign',
        id: c.id,
        name: 'Spring sale',
        scheduledFor: bodyOf(scheduled, 200).data.scheduledFor,
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
    const { s, c, out: before } = await pacedCampaign('slow', 40);
    await until(before, (n) => n >= 5);
    expectEnvelope(await api(pigeon, s.auth).campaigns.delete({ params: { id: c.id } }), 409, 'CONFLICT');
    const cancel = await api(pigeon, s.auth).campaigns.cancel({ params: { id: c.id } });
    const atAnswer = before();
    expect(cancel.body).toMatchObject({ success: true, data: { status: 'CANCELLED' } });
    const { sent, cancelled } = bodyOf(cancel, 200).data;
    expect(cancelled).toBeGreaterThan(0); // cancelled mid-send (40 spread over 8 s, cancelled after 5)
    // The answer waits for what workers had claimed: what they were handing over has arrived and is
    // counted in `sent`; the rest was dropped. Nothing reaches the relay after the answer.
    expect(atAnswer).toBe(sent);
    await new Promise((r) => setTimeout(r, 1500));
    const stats = bodyOf(await api(pigeon, s.auth).campaigns.stats({ params: { id: c.id } }), 200);
    expect(stats.pending).toBe(0);
    expect(stats.sent + stats.cancelled).toBe(40);
    expect(before()).toBe(atAnswer);
    expect(stats.sent).toBe(sent);
    expect((await get(s, c.id)).status).toBe('CANCELLED');
    expectEnvelope(await api(pigeon, s.auth).campaigns.cancel({ params: { id: c.id } }), 409, 'CONFLICT');
    expect((await api(pigeon, s.auth).campaigns.delete({ params: { id: c.id } })).status).toBe(204);
  });

  it("cancels at any moment: the answer, the stats, the month's usage and the sink agree", async () => {
    // Full speed (no send rate): workers hold claimed batches when the cancel lands, at a
    // different point of the send in each round.
    for (const [round, delayMs] of [0, 5, 20, 40, 80, 150, 300].entries()) {
      const s = await verifiedSender(pigeon, dns);
      const prefix = `cancel${round}-`;
      const { campaign: c, send } = await campaignToAll(pigeon, s, addresses(prefix, 60, 'c.example'), {
        campaign: content,
      });
      await send();
      await new Promise((r) => setTimeout(r, delayMs));
      const cancel = await api(pigeon, s.auth).campaigns.cancel({ params: { id: c.id } });
      if (cancel.status === 409) continue; // all 60 were out before the cancel: nothing to count
      const answer = bodyOf(cancel, 200).data;
      await new Promise((r) => setTimeout(r, 300)); // room for anything that would still arrive
      const atSink = sink.messages.filter((m) => m.to.some((t) => t.startsWith(prefix))).length;
      const stats = bodyOf(await api(pigeon, s.auth).campaigns.stats({ params: { id: c.id } }), 200);
      const usage = bodyOf(
        await api(pigeon, { cookie: s.owner.cookie }).billing.consumption({ params: { id: s.project.id } }),
        200,
      );
      const round_ = { round, delayMs, answer: { sent: answer.sent, cancelled: answer.cancelled }, atSink, stats };
      expect(stats.pending, JSON.stringify(round_)).toBe(0);
      expect(answer.sent, JSON.stringify(round_)).toBe(atSink);
      expect(stats.sent, JSON.stringify(round_)).toBe(atSink);
      expect(answer.cancelled, JSON.stringify(round_)).toBe(stats.cancelled);
      expect(stats.sent + stats.cancelled, JSON.stringify(round_)).toBe(60);
      // Charged for the 60 when it started; given back each one that will never be sent.
      expect(usage.campaigns.used, JSON.stringify(round_)).toBe(atSink);
    }
  });

  it('stays SENDING while a recipient waits or is in delivery, and is SENT once the last one is out', async () => {
    const { s, c, out } = await pacedCampaign('paced', 8);
    // Sampled while the campaign drains at 5/s: the status first, then what the sink has.
    const seen: Array<{ status: string; out: number }> = [];
    await until(
      async () => {
        const { status } = await get(s, c.id);
        seen.push({ status, out: out() });
        return status;
      },
      (status) => status === 'SENT',
      20_000,
    );
    expect(seen.some((x) => x.status === 'SENDING' && x.out > 0 && x.out < 8)).toBe(true);
    expect(seen.filter((x) => x.status === 'SENT').map((x) => x.out)).toEqual([8]);
  });

  it('test sends once with the contact’s data and moves no counter; template usage and 404s across projects', async () => {
    const s = await verifiedSender(pigeon, dns);
    await contacts(s, [{ email: 'tester@c.example', data: { firstName: 'Tess', plan: 'pro' } }]);
    const template = await api(pigeon, s.auth).templates.create({
      body: { name: 'Base', subject: 's', body: '<p>b</p>', from: s.from },
    });
    const c = bodyOf(
      await api(pigeon, s.auth).campaigns.create({ body: campaign(s, { templateId: bodyOf(template, 201).id }) }),
      201,
    ).data;
    const test = await api(pigeon, s.auth).campaigns.test({
      params: { id: c.id },
      body: { email: 'Tester@c.example' },
    });
    expect(test.body).toMatchObject({ success: true, data: { email: 'tester@c.example' } });
    const mail = await until(
      () => received('tester@c.example'),
      (m) => m.length > 0,
    );
    expect(parseMessage(mail[0]?.raw ?? '').headers.get('subject')).toBe('Hi Tess');
    expect(await get(s, c.id)).toMatchObject({ status: 'DRAFT', sentCount: 0, totalRecipients: 0 });
    const usage = await api(pigeon, s.auth).templates.usage({ params: { id: bodyOf(template, 201).id } });
    expect(bodyOf(usage, 200).campaigns).toEqual([{ id: c.id, name: 'Spring sale' }]);
    const other = await verifiedSender(pigeon, dns);
    const theirs = api(pigeon, other.auth).campaigns;
    const params = { id: c.id };
    for (const res of [
      await theirs.get({ params }),
      await theirs.replace({ params, body: campaign(other) }),
      await theirs.delete({ params }),
      await theirs.send({ params, body: undefined }),
      await theirs.cancel({ params }),
      await theirs.stats({ params }),
      await theirs.duplicate({ params }),
    ]) {
      expectEnvelope(res, 404, 'NOT_FOUND');
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
      const run = await campaignToAll(first, s, ['restart@c.example'], { campaign: content });
      id = run.campaign.id;
      const due = new Date(Date.now() + 2000).toISOString();
      expect((await run.send({ scheduledFor: due })).status).toBe('SCHEDULED');
    } finally {
      await first.stop();
    }
    const [a, b] = await Promise.all([startTestPigeon({ databaseUrl, env }), startTestPigeon({ databaseUrl, env })]);
    try {
      const done = await until(
        async () => bodyOf(await api(a, auth).campaigns.get({ params: { id } }), 200),
        (x) => x.status === 'SENT',
      );
      expect(done.totalRecipients).toBe(1);
      await new Promise((r) => setTimeout(r, 300));
      expect(received('restart@c.example')).toHaveLength(1);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('a transactional send overtakes a draining campaign: at most one claimed batch goes first', async () => {
    const CLAIM_BATCH = 4;
    const slowSink = await startSmtpSink({ delayMs: 20 });
    const slow = await startTestPigeon({
      databaseUrl: undefined,
      // One delivery loop: the order of its claims is the order at the relay (see below). Claims of
      // CLAIM_BATCH, not the default 10: the bound below follows the setting.
      env: {
        SMTP_URL: slowSink.url,
        DNS_SERVERS: dns.address,
        DELIVERY_CONCURRENCY: '1',
        DELIVERY_CLAIM_BATCH: String(CLAIM_BATCH),
      },
    });
    try {
      const s = await verifiedSender(slow, dns);
      await insertManyContacts(slow.deps.db.pool, s.project.id, 2000, { domain: 'c.example' });
      const c = bodyOf(await api(slow, s.auth).campaigns.create({ body: campaign(s) }), 201).data;
      expect(
        bodyOf(await api(slow, s.auth).campaigns.send({ params: { id: c.id }, body: undefined }), 200).data
          .totalRecipients,
      ).toBe(2000);
      await until(
        () => slowSink.messages.length,
        (n) => n >= 20,
      );
      // The loop holds one claimed batch at a time.
      const held: number[] = [];
      for (let i = 0; i < 20; i++) {
        const [row] = await queryRows<{ n: number }>(
          slow.deps.db.pool,
          sql`SELECT count(*)::int AS n FROM emails WHERE project_id = ${s.project.id}::uuid AND status = 'SENDING'`,
        );
        held.push(row?.n ?? 0);
        await new Promise((r) => setTimeout(r, 15));
      }
      expect(Math.max(...held)).toBeLessThanOrEqual(CLAIM_BATCH);
      expect(Math.max(...held)).toBeGreaterThan(0);
      const send = await api(slow, s.auth).emails.send({
        body: { to: 'urgent@c.example', from: s.from, subject: 'Your code', body: '<p>123456</p>' },
      });
      expect(send.status).toBe(200);
      const queuedAt = slowSink.messages.length;
      const urgent = () => slowSink.messages.findIndex((m) => m.to.includes('urgent@c.example'));
      expect(await until(urgent, (i) => i >= 0, 30_000)).toBeGreaterThanOrEqual(0);
      // Queued, it is in the first claim made after its commit, and first in that batch: only the
      // batch the loop held or was claiming then (at most CLAIM_BATCH) can reach the relay ahead of
      // it, however slow the machine. (With several loops, another loop's batch claimed while this
      // one composes the urgent mail may also go first: claim order is the promise, not relay order.)
      expect(urgent() - queuedAt).toBeLessThanOrEqual(CLAIM_BATCH);
      const stats = bodyOf(await api(slow, s.auth).campaigns.stats({ params: { id: c.id } }), 200);
      expect(stats.pending).toBeGreaterThan(1000); // the campaign was still draining
      await api(slow, s.auth).campaigns.cancel({ params: { id: c.id } });
    } finally {
      await slow.stop();
      await slowSink.close();
    }
    // It starts a Pigeon of its own: set-up a beforeAll would get hookTimeout (60 s) for, and
    // which took up to 13 s of the default 30 s on a machine loaded ten times over.
  }, 60_000);

  it('a contact who unsubscribes after the audience froze gets no MARKETING campaign mail', async () => {
    const s = await verifiedSender(pigeon, dns);
    const run = await campaignToAll(pigeon, s, ['first@u.example', 'second@u.example'], {
      sendRate: 2,
      campaign: content,
    });
    const c = run.campaign;
    await run.send();
    const rows = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT c.id, c.email FROM emails e JOIN contacts c ON c.id = e.contact_id WHERE e.campaign_id = ${c.id} ORDER BY e.next_attempt_at`,
    );
    const last = rows[1];
    await api(pigeon, s.auth).contacts.update({ params: { id: last?.id }, body: { subscribed: false } });
    const done = await run.finished();
    expect(done).toMatchObject({ status: 'SENT', sentCount: 1 });
    expect(received(last?.email)).toHaveLength(0);
    const stats = bodyOf(await api(pigeon, s.auth).campaigns.stats({ params: { id: c.id } }), 200);
    expect(stats).toMatchObject({ sent: 1, cancelled: 1 });
  });
});
