import { describe, expect, it } from 'vitest';
import { newProject, waitForJob } from '../../../test/accounts.js';
import { expectEnvelope } from '../../../test/helpers.js';
import { hrefs, parseMessage, pixelUrl } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { until } from '../../../test/until.js';

const { pigeon, sink, dns } = await startMailingPigeon({
  CAMPAIGN_DISPATCH_INTERVAL_MS: '100',
  CHANGE_FEED_POLL_MS: '40',
});

type Auth = Record<string, string>;

const get = async (auth: Auth, path: string) => pigeon.request('GET', path, { headers: auth });

const messageTo = async (to: string) => {
  const found = await until(
    async () => sink.messages.find((m) => m.to.includes(to)),
    (m) => m !== undefined,
  );
  if (!found) throw new Error(`no message to ${to}`);
  return parseMessage(found.raw);
};

const today = () => `${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`;

describe('analytics', () => {
  it('counts campaign and transactional email per day and hour, by campaign and by template', async () => {
    const s = await verifiedSender(pigeon, dns);
    for (const email of ['ann@example.com', 'bob@example.com']) {
      expect((await pigeon.request('POST', '/contacts', { headers: s.auth, body: { email } })).status).toBe(201);
    }
    const created = await pigeon.request('POST', '/campaigns', {
      headers: s.auth,
      body: {
        name: 'Spring sale',
        subject: 'Sale',
        body: '<p><a href="https://shop.example/sale">Sale</a> {{unsubscribeUrl}}</p>',
        from: s.from,
        audienceType: 'ALL',
      },
    });
    const campaignId = created.body.data.id;
    expect((await pigeon.request('POST', `/campaigns/${campaignId}/send`, { headers: s.auth })).status).toBe(200);
    const template = await pigeon.request('POST', '/templates', {
      headers: s.auth,
      body: { name: 'Receipt', subject: 'Your receipt', body: '<p>Thanks</p>', type: 'TRANSACTIONAL', from: s.from },
    });
    expect(template.status).toBe(201);
    const sent = await pigeon.request('POST', '/v1/send', {
      headers: s.auth,
      body: { to: 'carol@example.com', template: template.body.id },
    });
    expect(sent.status).toBe(200);

    // Ann opens, clicks and unsubscribes through the campaign's own links.
    const ann = await messageTo('ann@example.com');
    const pixel = pixelUrl(ann);
    const click = hrefs(ann).find((h) => h.includes('/t/c/'));
    const unsubscribe = /<([^>]+)>/.exec(ann.headers.get('list-unsubscribe') ?? '')?.[1];
    if (!pixel || !click || !unsubscribe) throw new Error('campaign mail lacks its tracked links');
    expect((await fetch(pixel)).status).toBe(200);
    expect((await fetch(click, { redirect: 'manual' })).status).toBe(302);
    const unsubscribed = await fetch(unsubscribe, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(unsubscribed.status).toBe(200);

    // Over SMTP the relay's 250 records `email.delivery` with `email.sent` (issue 12).
    const expected = { sent: 3, delivered: 3, opened: 1, clicked: 1, bounced: 0, complained: 0, unsubscribed: 1 };
    const daily = await until(
      () => get(s.auth, '/analytics/timeseries'),
      (r) =>
        r.body.totals?.sent === 3 &&
        r.body.totals.delivered === 3 &&
        r.body.totals.unsubscribed === 1 &&
        r.body.totals.clicked === 1,
    );
    expect(daily.status).toBe(200);
    expect(daily.body.totals).toEqual(expected);
    expect(daily.body.interval).toBe('day');
    expect(daily.body.points).toHaveLength(31); // 30 days widened to whole days: today's is the 31st
    // Totals are the sum of the points; the last point is today (all of it, unless midnight passed meanwhile).
    const sum = (points: Array<Record<string, number>>, m: string) => points.reduce((n, p) => n + (p[m] ?? 0), 0);
    expect(sum(daily.body.points, 'sent')).toBe(3);
    expect(daily.body.points.at(-1).timestamp).toBe(today());
    expect(daily.body.points[0]).toMatchObject({ sent: 0, opened: 0 });
    expect(daily.body.to).toBe(new Date(Date.parse(today()) + 86_400_000).toISOString());

    const ofCampaign = await get(s.auth, `/analytics/timeseries?campaignId=${campaignId}`);
    expect(ofCampaign.body.totals).toEqual({ ...expected, sent: 2, delivered: 2 });
    expect(ofCampaign.body.campaignId).toBe(campaignId);
    const ofTemplate = await get(s.auth, `/analytics/timeseries?templateId=${template.body.id}`);
    expect(ofTemplate.body.totals).toEqual({
      ...expected,
      sent: 1,
      delivered: 1,
      opened: 0,
      clicked: 0,
      unsubscribed: 0,
    });

    const hourly = await get(s.auth, '/analytics/timeseries?interval=hour');
    expect(hourly.body.points).toHaveLength(25);
    const thisHour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
    expect(hourly.body.points.at(-1).timestamp).toBe(thisHour);
    expect(hourly.body.totals).toEqual(expected);
    expect(sum(hourly.body.points, 'opened')).toBe(1);
    const past = new Date(Date.now() - 3 * 86_400_000).toISOString();
    const before = await get(s.auth, `/analytics/timeseries?to=${encodeURIComponent(past)}`);
    expect(before.body.totals.sent).toBe(0);

    const top = await get(s.auth, '/analytics/top-campaigns?sortBy=opened');
    expect(top.status).toBe(200);
    expect(top.body.data).toEqual([
      {
        id: campaignId,
        name: 'Spring sale',
        status: 'SENT',
        ...expected,
        sent: 2,
        delivered: 2,
        rates: { delivery: 1, open: 0.5, click: 0.5, bounce: 0, complaint: 0, unsubscribe: 0.5 },
      },
    ]);
    const events = await get(s.auth, '/analytics/top-events?type=all');
    expect(events.body.data).toContainEqual({ name: 'email.sent', count: 3 });
    expect(events.body.data).toContainEqual({ name: 'contact.unsubscribed', count: 1 });
    expect((await get(s.auth, '/analytics/top-events')).body.data).toEqual([]);
    const stats = await get(s.auth, '/analytics/campaign-stats');
    expect(stats.body).toMatchObject({ campaigns: 1, ...expected, sent: 2, delivered: 2, rates: { open: 0.5 } });

    // Another project sees none of it.
    const other = await newProject(pigeon);
    expect((await get(other.auth, '/analytics/timeseries')).body.totals.sent).toBe(0);
    expect((await get(other.auth, '/analytics/top-campaigns')).body.data).toEqual([]);
    expect((await get(other.auth, '/analytics/campaign-stats')).body.campaigns).toBe(0);
  });

  it('ranks tracked events, and forgets a name whose events are deleted', async () => {
    const { project, auth } = await newProject(pigeon);
    const pk = { authorization: `Bearer ${project.publicKey}` };
    // A tracked event's own `emailId` (not a uuid here) is data, never an attribution.
    for (const [email, event] of [
      ['a@example.com', 'viewed'],
      ['b@example.com', 'viewed'],
      ['a@example.com', 'viewed'],
      ['a@example.com', 'bought'],
    ]) {
      const body = { email, event, data: { emailId: 'not-a-uuid' } };
      expect((await pigeon.request('POST', '/v1/track', { headers: pk, body })).status).toBe(200);
    }
    const top = await until(
      () => get(auth, '/analytics/top-events'),
      (r) => r.body.data?.length === 2 && r.body.data[0].count === 3,
    );
    expect(top.body.data).toEqual([
      { name: 'viewed', count: 3 },
      { name: 'bought', count: 1 },
    ]);
    expect((await get(auth, '/analytics/top-events?limit=1')).body.data).toEqual([{ name: 'viewed', count: 3 }]);

    const deletion = await pigeon.request('DELETE', '/events/viewed', { headers: auth });
    expect(deletion.status).toBe(202);
    await waitForJob(pigeon, `/events/jobs/${deletion.body.jobId}`, auth);
    expect((await get(auth, '/analytics/top-events')).body.data).toEqual([{ name: 'bought', count: 1 }]);
  });

  it('refuses bad ranges, parameters and ids, and the public key', async () => {
    const { project, auth } = await newProject(pigeon);
    const other = await newProject(pigeon);
    const theirs = await pigeon.request('POST', '/campaigns', {
      headers: other.auth,
      body: { name: 'Theirs', subject: 'x', body: '<p>x</p>', from: 'a@b.example', audienceType: 'ALL' },
    });
    const refused = [
      '/analytics/timeseries?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z',
      '/analytics/timeseries?interval=hour&from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z',
      '/analytics/timeseries?interval=week',
      '/analytics/timeseries?campaignId=nope',
      '/analytics/timeseries?from=yesterday',
      '/analytics/top-campaigns?limit=101',
      '/analytics/top-campaigns?sortBy=revenue',
      '/analytics/top-events?type=some',
      '/analytics/campaign-stats?to=2020-01-01T00:00:00Z&from=2021-01-01T00:00:00Z',
    ];
    for (const path of refused) expectEnvelope(await get(auth, path), 422, 'VALIDATION_ERROR');
    const tooLong = expectEnvelope(
      await get(auth, '/analytics/timeseries?interval=hour&from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z'),
      422,
      'VALIDATION_ERROR',
    );
    expect(tooLong.message).toMatch(/at most 1000/);
    if (theirs.status === 201) {
      const id = theirs.body.data.id;
      expectEnvelope(await get(auth, `/analytics/timeseries?campaignId=${id}`), 404, 'NOT_FOUND');
    }
    expectEnvelope(
      await get(auth, '/analytics/timeseries?templateId=0190a0b0-0000-7000-8000-000000000000'),
      404,
      'NOT_FOUND',
    );
    const pk = { authorization: `Bearer ${project.publicKey}` };
    expectEnvelope(await get(pk, '/analytics/timeseries'), 401, 'INVALID_API_KEY');
    expectEnvelope(await pigeon.request('GET', '/analytics/top-events'), 401, 'UNAUTHORIZED');
  });
});

describe('GET /events/:eventName/usage', () => {
  it('names the segments, workflows and campaigns that reference the event, and only those', async () => {
    const s = await verifiedSender(pigeon, dns);
    const onEvent = { logic: 'AND', groups: [{ filters: [{ field: 'event.purchase', operator: 'triggered' }] }] };
    const segment = await pigeon.request('POST', '/segments', {
      headers: s.auth,
      body: { name: 'Buyers', condition: onEvent },
    });
    expect(segment.status).toBe(201);
    const campaign = await pigeon.request('POST', '/campaigns', {
      headers: s.auth,
      body: {
        name: 'Thanks buyers',
        subject: 'Thanks',
        body: '<p>Thanks</p>',
        from: s.from,
        audienceType: 'FILTERED',
        audienceCondition: onEvent,
      },
    });
    expect(campaign.status).toBe(201);
    const workflow = await pigeon.request('POST', '/workflows', {
      headers: s.auth,
      body: { name: 'After purchase', triggerType: 'EVENT', triggerConfig: { eventName: 'purchase' } },
    });
    expect(workflow.status).toBe(201);
    const usage = await get(s.auth, '/events/purchase/usage');
    expect(usage.status).toBe(200);
    expect(usage.body).toEqual({
      name: 'purchase',
      segments: [{ id: segment.body.id, name: 'Buyers' }],
      campaigns: [{ id: campaign.body.data.id, name: 'Thanks buyers' }],
      workflows: [{ id: workflow.body.id, name: 'After purchase' }],
    });
    expect((await get(s.auth, '/events/refund/usage')).body).toEqual({
      name: 'refund',
      segments: [],
      campaigns: [],
      workflows: [],
    });
    const other = await newProject(pigeon);
    expect((await get(other.auth, '/events/purchase/usage')).body.segments).toEqual([]);
  });
});
