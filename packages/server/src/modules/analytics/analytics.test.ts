import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { newProject, waitForJob } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { campaignToAll } from '../../../test/campaigns.js';
import { insertEvent } from '../../../test/fixtures/event-log.js';
import { insertBareProject } from '../../../test/fixtures/projects.js';
import { databaseMigratedTo, expectEnvelope } from '../../../test/helpers.js';
import { hrefs, parseMessage, pixelUrl } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { until } from '../../../test/until.js';
import { queryRows, sql } from '../../db/query.js';
import { countFacts, FOLDED_PART, foldFinishedHours, forgetEventCounts } from './rollup.js';

const { pigeon, sink, dns } = await startMailingPigeon({
  CAMPAIGN_DISPATCH_INTERVAL_MS: '100',
  CHANGE_FEED_POLL_MS: '40',
});

type Auth = Record<string, string>;

// Raw GET for the query strings refused on purpose (several do not fit the contract's query types).
// untyped: wrong on purpose (query strings the contract's types refuse)
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

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The start of the current UTC hour, or of the one `hoursBack` hours before it. */
const hourStart = (hoursBack = 0) => new Date(Math.floor(Date.now() / HOUR) * HOUR - hoursBack * HOUR);
/** `hour` o'clock (UTC) `daysAgo` days before today. */
const daysAgoAt = (daysAgo: number, hour: number) =>
  new Date(Math.floor(Date.now() / DAY) * DAY - daysAgo * DAY + hour * HOUR);
/** A feed part's row of the analytics rollup, as the feed's consumer writes it. */
const addCount = (projectId: string, hour: Date, name: string, part: number, count: number) =>
  queryRows(
    pigeon.deps.db.pool,
    sql`INSERT INTO event_counts (project_id, hour, name, part, count)
        VALUES (${projectId}::uuid, ${hour}::timestamptz, ${name}, ${part}::smallint, ${count}::bigint)`,
  );

describe('analytics', () => {
  it('counts campaign and transactional email per day and hour, by campaign and by template', async () => {
    const s = await verifiedSender(pigeon, dns);
    const run = await campaignToAll(pigeon, s, ['ann@example.com', 'bob@example.com'], {
      campaign: {
        name: 'Spring sale',
        subject: 'Sale',
        body: '<p><a href="https://shop.example/sale">Sale</a> {{unsubscribeUrl}}</p>',
      },
    });
    const campaignId = run.campaign.id;
    await run.send();
    const template = await api(pigeon, s.auth).templates.create({
      body: { name: 'Receipt', subject: 'Your receipt', body: '<p>Thanks</p>', type: 'TRANSACTIONAL', from: s.from },
    });
    expect(template.status).toBe(201);
    const sent = await api(pigeon, s.auth).emails.send({
      body: { to: 'carol@example.com', template: bodyOf(template, 201).id },
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
      () => api(pigeon, s.auth).analytics.timeseries(),
      (r) =>
        r.status === 200 &&
        r.body.totals.sent === 3 &&
        r.body.totals.delivered === 3 &&
        r.body.totals.unsubscribed === 1 &&
        r.body.totals.clicked === 1,
    );
    expect(daily.status).toBe(200);
    expect(bodyOf(daily, 200).totals).toEqual(expected);
    expect(bodyOf(daily, 200).interval).toBe('day');
    expect(bodyOf(daily, 200).points).toHaveLength(31); // 30 days widened to whole days: today's is the 31st
    // Totals are the sum of the points; the last point is today (all of it, unless midnight passed meanwhile).
    const sum = (points: Array<Record<string, number | string>>, m: string) =>
      points.reduce((n, p) => n + Number(p[m] ?? 0), 0);
    expect(sum(bodyOf(daily, 200).points, 'sent')).toBe(3);
    expect(bodyOf(daily, 200).points.at(-1)?.timestamp).toBe(today());
    expect(bodyOf(daily, 200).points[0]).toMatchObject({ sent: 0, opened: 0 });
    expect(bodyOf(daily, 200).to).toBe(new Date(Date.parse(today()) + 86_400_000).toISOString());

    const ofCampaign = await api(pigeon, s.auth).analytics.timeseries({ query: { campaignId } });
    expect(bodyOf(ofCampaign, 200).totals).toEqual({ ...expected, sent: 2, delivered: 2 });
    expect(bodyOf(ofCampaign, 200).campaignId).toBe(campaignId);
    const ofTemplate = await api(pigeon, s.auth).analytics.timeseries({
      query: { templateId: bodyOf(template, 201).id },
    });
    expect(bodyOf(ofTemplate, 200).totals).toEqual({
      ...expected,
      sent: 1,
      delivered: 1,
      opened: 0,
      clicked: 0,
      unsubscribed: 0,
    });

    const hourly = await api(pigeon, s.auth).analytics.timeseries({ query: { interval: 'hour' } });
    expect(bodyOf(hourly, 200).points).toHaveLength(25);
    const thisHour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
    expect(bodyOf(hourly, 200).points.at(-1)?.timestamp).toBe(thisHour);
    expect(bodyOf(hourly, 200).totals).toEqual(expected);
    expect(sum(bodyOf(hourly, 200).points, 'opened')).toBe(1);
    const past = new Date(Date.now() - 3 * 86_400_000).toISOString();
    const before = await api(pigeon, s.auth).analytics.timeseries({ query: { to: past } });
    expect(bodyOf(before, 200).totals.sent).toBe(0);

    const top = await api(pigeon, s.auth).analytics.topCampaigns({ query: { sortBy: 'opened' } });
    expect(top.status).toBe(200);
    expect(bodyOf(top, 200).data).toEqual([
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
    const events = await api(pigeon, s.auth).analytics.topEvents({ query: { type: 'all' } });
    expect(bodyOf(events, 200).data).toContainEqual({ name: 'email.sent', count: 3 });
    expect(bodyOf(events, 200).data).toContainEqual({ name: 'contact.unsubscribed', count: 1 });
    expect(bodyOf(await api(pigeon, s.auth).analytics.topEvents(), 200).data).toEqual([]);
    const stats = await api(pigeon, s.auth).analytics.campaignStats();
    expect(stats.body).toMatchObject({ campaigns: 1, ...expected, sent: 2, delivered: 2, rates: { open: 0.5 } });

    // Another project sees none of it.
    const other = await newProject(pigeon);
    expect(bodyOf(await api(pigeon, other.auth).analytics.timeseries(), 200).totals.sent).toBe(0);
    expect(bodyOf(await api(pigeon, other.auth).analytics.topCampaigns(), 200).data).toEqual([]);
    expect(bodyOf(await api(pigeon, other.auth).analytics.campaignStats(), 200).campaigns).toBe(0);
  });

  it("reads a batch's facts as the view event_count_facts does: attribution through the named email of the same project only", async () => {
    const a = await verifiedSender(pigeon, dns);
    const template = await api(pigeon, a.auth).templates.create({
      body: { name: 'Receipt', subject: 'Receipt', body: '<p>Thanks</p>', from: a.from, type: 'TRANSACTIONAL' },
    });
    const sent = await api(pigeon, a.auth).emails.send({
      body: { to: 'facts@example.com', template: bodyOf(template, 201).id },
    });
    const [email] = bodyOf(sent, 200).data.emails;
    if (!email) throw new Error('nothing queued');
    const b = await newProject(pigeon);
    const contactB = bodyOf(await api(pigeon, b.auth).contacts.create({ body: { email: 'b@example.com' } }), 201).id;
    const event = (projectId: string, contactId: string, name: string, data: object) =>
      insertEvent(pigeon.deps.db.pool, { projectId, contactId, name, data }).then((id) => [{ id }]);
    const crafted = [
      await event(a.project.id, email.contact.id, 'email.opened', { emailId: email.email }),
      await event(a.project.id, email.contact.id, 'contact.unsubscribed', { emailId: email.email }),
      await event(a.project.id, email.contact.id, 'order.paid', { emailId: email.email }), // not an email event
      await event(a.project.id, email.contact.id, 'email.clicked', { emailId: 'not-a-uuid' }),
      await event(b.project.id, contactB, 'email.opened', { emailId: email.email }), // another project's email
    ].flat();
    const recent = await queryRows<{ id: string }>(
      pigeon.deps.db.pool,
      sql`SELECT id FROM events ORDER BY id DESC LIMIT 2000`,
    );
    const ids = [...new Set([...crafted, ...recent].map((r) => r.id))];
    const order = sql`ORDER BY id`;
    const batch = await queryRows(pigeon.deps.db.pool, sql`SELECT * FROM (${countFacts(ids)}) AS f ${order}`);
    const view = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT * FROM event_count_facts WHERE id = ANY(${ids}::uuid[]) ${order}`,
    );
    expect(batch).toEqual(view);
    const byId = new Map(batch.map((r) => [r.id, r]));
    const templateId = bodyOf(template, 201).id;
    expect(crafted.map((r) => byId.get(r.id)?.template_id ?? null)).toEqual([templateId, templateId, null, null, null]);
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
    ] as const) {
      const body = { email, event, data: { emailId: 'not-a-uuid' } };
      expect((await api(pigeon, pk).events.track({ body })).status).toBe(200);
    }
    const top = await until(
      () => api(pigeon, auth).analytics.topEvents(),
      (r) => r.status === 200 && r.body.data.length === 2 && r.body.data[0]?.count === 3,
    );
    expect(bodyOf(top, 200).data).toEqual([
      { name: 'viewed', count: 3 },
      { name: 'bought', count: 1 },
    ]);
    expect(bodyOf(await api(pigeon, auth).analytics.topEvents({ query: { limit: 1 } }), 200).data).toEqual([
      { name: 'viewed', count: 3 },
    ]);

    const deletion = await api(pigeon, auth).events.deleteByName({ params: { eventName: 'viewed' } });
    expect(deletion.status).toBe(202);
    await waitForJob(pigeon, `/events/jobs/${bodyOf(deletion, 202).jobId}`, auth);
    expect(bodyOf(await api(pigeon, auth).analytics.topEvents(), 200).data).toEqual([{ name: 'bought', count: 1 }]);
  });

  it('folds the feed parts of finished hours into one row, in batches, and every count stays the same', async () => {
    const { project, auth } = await newProject(pigeon);
    const pool = pigeon.deps.db.pool;
    const thisHour = hourStart();
    const earlier = new Date(thisHour.getTime() - 3 * HOUR);
    // Three hours ago: 'viewed' in all 8 parts (1 + 2 + … + 8 = 36), 'bought' in 2; this hour: 3 parts.
    const counts = [
      ...Array.from({ length: 8 }, (_, part) => [earlier, 'viewed', part, part + 1] as const),
      [earlier, 'bought', 0, 4] as const,
      [earlier, 'bought', 5, 6] as const,
      ...Array.from({ length: 3 }, (_, part) => [thisHour, 'viewed', part, 1] as const),
    ];
    for (const [hour, name, part, count] of counts) await addCount(project.id, hour, name, part, count);
    const range = { from: new Date(earlier.getTime() - HOUR).toISOString(), to: new Date().toISOString() };
    const answers = async () => ({
      stats: bodyOf(await api(pigeon, auth).events.stats({ query: range }), 200),
      top: bodyOf(await api(pigeon, auth).analytics.topEvents(), 200).data,
    });
    const rows = async () =>
      (
        await queryRows<{ hour: Date; name: string; part: number; count: number }>(
          pool,
          sql`SELECT hour, name, part, count::int FROM event_counts WHERE project_id = ${project.id}::uuid
              ORDER BY hour, name, part`,
        )
      ).map((r) => [r.hour.getTime() === thisHour.getTime() ? 'this hour' : 'earlier', r.name, r.part, r.count]);
    const before = await answers();
    expect(before.stats.total).toBe(36 + 10 + 3);

    // Every project's finished hours fold; a batch of 4 takes several statements.
    expect(await foldFinishedHours(pool, new Date(thisHour.getTime() - HOUR), 4)).toBeGreaterThanOrEqual(10);
    expect(await rows()).toEqual([
      ['earlier', 'bought', FOLDED_PART, 10],
      ['earlier', 'viewed', FOLDED_PART, 36],
      ['this hour', 'viewed', 0, 1],
      ['this hour', 'viewed', 1, 1],
      ['this hour', 'viewed', 2, 1],
    ]);
    expect(await answers()).toEqual(before);

    // A late event of a folded hour gets a per-part row again, and the next run folds it in.
    await addCount(project.id, earlier, 'viewed', 3, 5);
    await foldFinishedHours(pool, new Date(thisHour.getTime() - HOUR), 4);
    expect((await rows()).filter(([hour]) => hour === 'earlier')).toEqual([
      ['earlier', 'bought', FOLDED_PART, 10],
      ['earlier', 'viewed', FOLDED_PART, 41],
    ]);
  });

  it('answers whole days from the daily totals the fold keeps, plus the hours not folded yet', async () => {
    const { project, auth } = await newProject(pigeon);
    const pool = pigeon.deps.db.pool;
    const dayOf = (daysAgo: number) => daysAgoAt(daysAgo, 0).toISOString().slice(0, 10);
    await addCount(project.id, daysAgoAt(3, 1), 'viewed', 0, 1);
    await addCount(project.id, daysAgoAt(3, 1), 'viewed', 1, 2);
    await addCount(project.id, daysAgoAt(3, 23), 'viewed', 2, 3);
    await addCount(project.id, daysAgoAt(3, 12), 'bought', 0, 4);
    await addCount(project.id, daysAgoAt(2, 5), 'viewed', 5, 5);
    const stats = async (range: { from: Date; to: Date }) => {
      const query = { from: range.from.toISOString(), to: range.to.toISOString() };
      const body = bodyOf(await api(pigeon, auth).events.stats({ query }), 200);
      return { total: body.total, byName: body.byName, byDay: body.byDay };
    };
    const daily = () =>
      queryRows<{ day: string; name: string; count: number }>(
        pool,
        sql`SELECT to_char(day, 'YYYY-MM-DD') AS day, name, count::int FROM event_counts_daily
            WHERE project_id = ${project.id}::uuid ORDER BY day, name`,
      );
    // From 10:00 three days ago (a partial day, then whole days) to now; and two whole days.
    const partial = { from: daysAgoAt(3, 10), to: new Date() };
    const whole = { from: daysAgoAt(3, 0), to: daysAgoAt(1, 0) };
    const expected = {
      partial: {
        total: 12,
        byName: [
          { name: 'viewed', count: 8 },
          { name: 'bought', count: 4 },
        ],
        byDay: [
          { day: dayOf(3), count: 7 },
          { day: dayOf(2), count: 5 },
        ],
      },
      whole: {
        total: 15,
        byName: [
          { name: 'viewed', count: 11 },
          { name: 'bought', count: 4 },
        ],
        byDay: [
          { day: dayOf(3), count: 10 },
          { day: dayOf(2), count: 5 },
        ],
      },
    };
    expect(await stats(partial)).toEqual(expected.partial);
    expect(await stats(whole)).toEqual(expected.whole);
    expect(await daily()).toEqual([]);

    await foldFinishedHours(pool, hourStart(1), 2);
    expect(await daily()).toEqual([
      { day: dayOf(3), name: 'bought', count: 4 },
      { day: dayOf(3), name: 'viewed', count: 6 },
      { day: dayOf(2), name: 'viewed', count: 5 },
    ]);
    expect(await stats(partial)).toEqual(expected.partial);
    expect(await stats(whole)).toEqual(expected.whole);

    // A late event of a folded day is counted before the next fold (its per-part row) and after it (the daily total).
    await addCount(project.id, daysAgoAt(2, 7), 'viewed', 3, 7);
    const late = { ...expected.whole, total: 22 };
    late.byName = [
      { name: 'viewed', count: 18 },
      { name: 'bought', count: 4 },
    ];
    late.byDay = [
      { day: dayOf(3), count: 10 },
      { day: dayOf(2), count: 12 },
    ];
    expect(await stats(whole)).toEqual(late);
    await foldFinishedHours(pool, hourStart(1), 2);
    expect(await stats(whole)).toEqual(late);
    expect((await daily()).find((r) => r.day === dayOf(2))?.count).toBe(12);

    // Forgetting a name (DELETE /events/:name) forgets its daily totals too.
    await forgetEventCounts(pool, project.id, 'viewed');
    expect(await daily()).toEqual([{ day: dayOf(3), name: 'bought', count: 4 }]);
    expect(await stats(whole)).toEqual({
      total: 4,
      byName: [{ name: 'bought', count: 4 }],
      byDay: [{ day: dayOf(3), count: 4 }],
    });
  });

  it('forgets a name whose hours a fold is folding at that moment: neither its folded row nor its daily total comes back', async () => {
    const { project } = await newProject(pigeon);
    const pool = pigeon.deps.db.pool;
    const hour = hourStart(5);
    await addCount(project.id, hour, 'doomed', 0, 3);
    await addCount(project.id, hour, 'doomed', 1, 4);
    const left = async () =>
      queryRows<{ n: number }>(
        pool,
        sql`SELECT ((SELECT count(*) FROM event_counts WHERE project_id = ${project.id}::uuid)
                 + (SELECT count(*) FROM event_counts_daily WHERE project_id = ${project.id}::uuid))::int AS n`,
      );
    // A fold in flight: its rows picked (and locked), its folded row and daily total written, not committed yet.
    const fold = await pool.connect();
    try {
      await fold.query('BEGIN');
      expect(await foldFinishedHours(fold, new Date(hour.getTime() + HOUR), 1_000)).toBeGreaterThanOrEqual(2);
      let forgotten = false;
      const forgetting = forgetEventCounts(pool, project.id, 'doomed').then(() => {
        forgotten = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(forgotten).toBe(false); // it waits for the fold
      await fold.query('COMMIT');
      await forgetting;
    } finally {
      fold.release();
    }
    expect((await left())[0]?.n).toBe(0);
  });

  it('a daily series of the project reads the daily totals: the hourly series summed per day, before and after folds', async () => {
    const { project, auth } = await newProject(pigeon);
    const pool = pigeon.deps.db.pool;
    await addCount(project.id, daysAgoAt(3, 0), 'email.sent', 0, 2);
    await addCount(project.id, daysAgoAt(3, 23), 'email.sent', 1, 3);
    await addCount(project.id, daysAgoAt(3, 9), 'email.open', 2, 1);
    await addCount(project.id, daysAgoAt(2, 5), 'email.sent', 5, 4);
    await addCount(project.id, daysAgoAt(2, 6), 'viewed', 0, 9); // not a metric
    const range = { from: daysAgoAt(4, 0).toISOString(), to: daysAgoAt(0, 0).toISOString() };
    const series = async (interval: 'day' | 'hour') =>
      bodyOf(await api(pigeon, auth).analytics.timeseries({ query: { ...range, interval } }), 200);
    const hourlySummedPerDay = async () => {
      const hourly = await series('hour');
      const byDay = new Map<string, Record<string, number>>();
      for (const { timestamp, ...counts } of hourly.points) {
        const day = `${timestamp.slice(0, 10)}T00:00:00.000Z`;
        const sum = byDay.get(day) ?? {};
        for (const [metric, n] of Object.entries(counts)) sum[metric] = (sum[metric] ?? 0) + n;
        byDay.set(day, sum);
      }
      return { totals: hourly.totals, points: [...byDay].map(([timestamp, counts]) => ({ timestamp, ...counts })) };
    };
    const daily = async () => {
      const { totals, points } = await series('day');
      return { totals, points };
    };
    const expected = await hourlySummedPerDay();
    expect(expected.totals).toMatchObject({ sent: 9, opened: 1 });
    expect(await daily()).toEqual(expected);
    await foldFinishedHours(pool, hourStart(1), 2);
    expect(await daily()).toEqual(expected);
    // A late count of a folded day: in the series before the next fold (its per-part row) and after it.
    await addCount(project.id, daysAgoAt(3, 4), 'email.sent', 3, 5);
    const late = await hourlySummedPerDay();
    expect(late.totals.sent).toBe(14);
    expect(await daily()).toEqual(late);
    await foldFinishedHours(pool, hourStart(1), 2);
    expect(await daily()).toEqual(late);
    expect(await hourlySummedPerDay()).toEqual(late);
  });

  it('refuses bad ranges, parameters and ids, and the public key', async () => {
    const { project, auth } = await newProject(pigeon);
    const other = await newProject(pigeon);
    const theirs = await api(pigeon, other.auth).campaigns.create({
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
      await api(pigeon, auth).analytics.timeseries({
        query: { interval: 'hour', from: '2026-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z' },
      }),
      422,
      'VALIDATION_ERROR',
    );
    expect(tooLong.message).toMatch(/at most 1000/);
    if (theirs.status === 201) {
      const id = bodyOf(theirs, 201).data.id;
      expectEnvelope(await api(pigeon, auth).analytics.timeseries({ query: { campaignId: id } }), 404, 'NOT_FOUND');
    }
    expectEnvelope(
      await api(pigeon, auth).analytics.timeseries({ query: { templateId: '0190a0b0-0000-7000-8000-000000000000' } }),
      404,
      'NOT_FOUND',
    );
    const pk = { authorization: `Bearer ${project.publicKey}` };
    expectEnvelope(await api(pigeon, pk).analytics.timeseries(), 401, 'INVALID_API_KEY');
    expectEnvelope(await api(pigeon).analytics.topEvents(), 401, 'UNAUTHORIZED');
  });
});

describe('GET /events/:eventName/usage', () => {
  it('names the segments, workflows and campaigns that reference the event, and only those', async () => {
    const s = await verifiedSender(pigeon, dns);
    const onEvent = { logic: 'AND', groups: [{ filters: [{ field: 'event.purchase', operator: 'triggered' }] }] };
    const segment = await api(pigeon, s.auth).segments.create({ body: { name: 'Buyers', condition: onEvent } });
    expect(segment.status).toBe(201);
    const campaign = await api(pigeon, s.auth).campaigns.create({
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
    const workflow = await api(pigeon, s.auth).workflows.create({
      body: { name: 'After purchase', triggerType: 'EVENT', triggerConfig: { eventName: 'purchase' } },
    });
    expect(workflow.status).toBe(201);
    const usage = await api(pigeon, s.auth).events.usage({ params: { eventName: 'purchase' } });
    expect(usage.status).toBe(200);
    expect(usage.body).toEqual({
      name: 'purchase',
      segments: [{ id: bodyOf(segment, 201).id, name: 'Buyers' }],
      campaigns: [{ id: bodyOf(campaign, 201).data.id, name: 'Thanks buyers' }],
      workflows: [{ id: bodyOf(workflow, 201).id, name: 'After purchase' }],
    });
    expect(bodyOf(await api(pigeon, s.auth).events.usage({ params: { eventName: 'refund' } }), 200)).toEqual({
      name: 'refund',
      segments: [],
      campaigns: [],
      workflows: [],
    });
    const other = await newProject(pigeon);
    expect(
      bodyOf(await api(pigeon, other.auth).events.usage({ params: { eventName: 'purchase' } }), 200).segments,
    ).toEqual([]);
  });
});

describe('the daily totals migration', () => {
  it("backfills an existing rollup's folded hours per UTC day and name, and nothing else", async () => {
    const db = await databaseMigratedTo('Migration20261226010000_event_counts_fold');
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    try {
      const projectId = '01900000-0000-7000-8000-00000000d001';
      await insertBareProject(pool, projectId, 'daily');
      const counts: Array<[string, string, number, number]> = [
        ['2026-03-01T00:00:00Z', 'viewed', -1, 10],
        ['2026-03-01T23:00:00Z', 'viewed', -1, 5],
        ['2026-03-01T23:00:00Z', 'viewed', 2, 3], // not folded yet: not in the daily totals
        ['2026-03-02T00:00:00Z', 'viewed', -1, 1],
        ['2026-03-01T12:00:00Z', 'bought', -1, 4],
      ];
      for (const [hour, name, part, count] of counts) {
        await queryRows(
          pool,
          sql`INSERT INTO event_counts (project_id, hour, name, part, count)
              VALUES (${projectId}::uuid, ${hour}::timestamptz, ${name}, ${part}::smallint, ${count}::bigint)`,
        );
      }
      await db.up();
      const daily = await queryRows<{ day: string; name: string; count: number }>(
        pool,
        sql`SELECT to_char(day, 'YYYY-MM-DD') AS day, name, count::int FROM event_counts_daily ORDER BY day, name`,
      );
      expect(daily).toEqual([
        { day: '2026-03-01', name: 'bought', count: 4 },
        { day: '2026-03-01', name: 'viewed', count: 15 },
        { day: '2026-03-02', name: 'viewed', count: 1 },
      ]);
    } finally {
      await pool.end();
    }
  });
});
