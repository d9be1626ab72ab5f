import { randomBytes } from 'node:crypto';
import { CAMPAIGNS, CONTACTS, EVENTS, RAW_DAILY_SQL, SEED } from '../lib/analytics.mjs';
import { bulkLoad, ROLLUP_SQL } from '../lib/bulk-load.mjs';
import { fmt, percentile, r1, timeSequential, waitFeedDrained } from '../lib/segments.mjs';

/**
 * GET /analytics/timeseries (30 days, daily: the default) over a project with 10,000,000 events.
 *
 * Seed (SQL, on a Pigeon of its own): 100,000 contacts, 30 SENT campaigns with 2,000 emails each,
 * then 10M events over the last 30 days (bench/lib/analytics.mjs has the mix: 83% email events that
 * name an email of the day's campaign, 17% custom). The events go around the change feed (its
 * trigger disabled for the INSERT, the other event indexes dropped and rebuilt after it: a bulk
 * load), and are counted into the rollup by the statement the rollup's migration backfills with,
 * over the same view the feed consumer reads. The consumer itself is measured live afterwards:
 * 200 events tracked through POST /v1/track, and the time until GET /analytics/top-events counts
 * them all.
 *
 * Timed task: the daily series 30 times one request at a time (after 3 warm-ups); p95 is the
 * target. Also timed: hourly over 7 days, one campaign's series, top-campaigns, campaign-stats,
 * top-events; and once, the daily counts computed from `events` directly (what the rollup spares).
 * The series' totals are checked against a count in SQL.
 */
const RUNS = 30;
const LIVE_EVENTS = 200;

const ms = (t0) => performance.now() - t0;
const timed = async (fn) => {
  const t0 = performance.now();
  const value = await fn();
  return { value, seconds: ms(t0) / 1000 };
};

async function seed(ctx) {
  const p = ctx.projectId;
  const steps = {};
  steps.contacts = (await timed(() => ctx.sql(SEED.contacts, [p]))).seconds;
  steps.campaigns = (await timed(() => ctx.sql(SEED.campaigns, [p]))).seconds;
  steps.emails = (await timed(() => ctx.sql(SEED.emails, [p]))).seconds;
  const native = (await ctx.sql(`SELECT to_regprocedure('uuidv7()') IS NOT NULL AS ok`)).rows[0].ok;
  const load = await bulkLoad(ctx, ['events'], () =>
    ctx.sql(SEED.events(native ? 'uuidv7()' : 'uuidv7_compat()'), [p, EVENTS]),
  );
  steps.events = load.load;
  steps.indexes = load.indexes;
  steps.rollup = (await timed(() => ctx.sql(ROLLUP_SQL, [p, []]))).seconds;
  steps.vacuum = (await timed(() => ctx.sql('VACUUM (ANALYZE) events, event_counts, emails, contacts'))).seconds;
  return steps;
}

/** Tracks `LIVE_EVENTS` events of a new name; seconds from the last answer until top-events counts them all. */
async function liveFreshness(ctx) {
  const name = `live-${randomBytes(4).toString('hex')}`;
  for (let i = 0; i < LIVE_EVENTS; i++) {
    const res = await ctx.fetch('/v1/track', {
      method: 'POST',
      headers: ctx.publicAuth,
      json: { email: `bench-${i % CONTACTS}@analytics.example`, event: name },
    });
    if (res.status !== 200) throw new Error(`track answered ${res.status}: ${await res.text()}`);
  }
  const t0 = performance.now();
  const from = new Date(Date.now() - 3_600_000).toISOString();
  for (;;) {
    const top = await ctx.json(`/analytics/top-events?limit=100&from=${encodeURIComponent(from)}`, {
      headers: ctx.auth,
    });
    if (top.data.find((e) => e.name === name)?.count === LIVE_EVENTS) return ms(t0) / 1000;
    if (ms(t0) > 60_000) throw new Error(`tracked events not counted after 60 s: ${JSON.stringify(top.data)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const stats = (sample) => {
  const sorted = [...sample.ms].sort((a, b) => a - b);
  return { medianMs: r1(sample.medianMs), p95Ms: r1(percentile(sorted, 95)), maxMs: r1(sample.maxMs) };
};

export default {
  name: 'analytics-10m',
  description: `GET /analytics/timeseries (30 days, daily) over ${EVENTS.toLocaleString('en-US')} events, sequential`,
  pigeonEnv: {},
  target: { metric: 'dailyP95Ms', max: 200, unit: 'ms', digits: 1, label: '30-day daily series p95 ≤ 200 ms' },
  async setup(ctx) {
    const { value: steps, seconds } = await timed(() => seed(ctx));
    const drained = await waitFeedDrained(ctx);
    const size = (
      await ctx.sql(
        `SELECT (SELECT count(*) FROM event_counts WHERE project_id = $1)::int AS rollup_rows,
                (SELECT pg_size_pretty(sum(pg_total_relation_size(inhrelid))) FROM pg_inherits
                 WHERE inhparent = 'events'::regclass) AS events_size`,
        [ctx.projectId],
      )
    ).rows[0];
    ctx.state.seed = { seconds: r1(seconds), ...Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, r1(v)])) };
    ctx.note(
      `seed ${fmt(seconds, 1)} s: ${Object.entries(steps)
        .map(([k, v]) => `${k} ${fmt(v, 1)} s`)
        .join(', ')}; ${EVENTS.toLocaleString('en-US')} events (${size.events_size} with indexes) → ` +
        `${size.rollup_rows.toLocaleString('en-US')} rollup rows; feed drained in ${fmt(drained ?? 0, 1)} s`,
    );
    ctx.state.freshness = await liveFreshness(ctx);
    ctx.note(
      `consumer freshness: ${LIVE_EVENTS} events tracked one by one were all counted ${fmt(ctx.state.freshness, 2)} s after the last answer`,
    );
  },
  async run(ctx) {
    const daily = await timeSequential(ctx, { path: '/analytics/timeseries', n: RUNS, warmup: 3 });
    const { from, to, totals } = daily.body;
    const expected = (
      await ctx.sql(
        `SELECT count(*)::int AS n FROM events WHERE project_id = $1 AND name = 'email.sent'
           AND created_at >= $2 AND created_at < $3`,
        [ctx.projectId, from, to],
      )
    ).rows[0].n;
    const campaign = (await ctx.sql(`SELECT md5('bench-campaign-0')::uuid AS id`)).rows[0].id;
    const week = new Date(Date.now() - 7 * 86_400_000).toISOString();
    const others = {
      hourly7d: await timeSequential(ctx, { path: `/analytics/timeseries?interval=hour&from=${week}`, n: 10 }),
      campaign30d: await timeSequential(ctx, { path: `/analytics/timeseries?campaignId=${campaign}`, n: 10 }),
      topCampaigns: await timeSequential(ctx, { path: '/analytics/top-campaigns', n: 10 }),
      campaignStats: await timeSequential(ctx, { path: '/analytics/campaign-stats', n: 10 }),
      topEvents: await timeSequential(ctx, { path: '/analytics/top-events?type=all', n: 10 }),
    };
    const raw = await timed(() => ctx.sql(RAW_DAILY_SQL, [ctx.projectId, from, to]));
    const d = stats(daily);
    const problem =
      totals.sent !== expected ? `series counts ${totals.sent} email.sent, SQL counts ${expected}` : undefined;
    return {
      dailyMedianMs: d.medianMs,
      dailyP95Ms: d.p95Ms,
      dailyMaxMs: d.maxMs,
      points: daily.body.points.length,
      sentTotal: totals.sent,
      others: Object.fromEntries(Object.entries(others).map(([k, v]) => [k, stats(v)])),
      rawEventsDailyMs: r1(raw.seconds * 1000),
      freshnessSeconds: r1(ctx.state.freshness),
      seed: ctx.state.seed,
      campaigns: CAMPAIGNS,
      problem,
      summary:
        `daily 30 d: median ${fmt(d.medianMs, 1)} ms, p95 ${fmt(d.p95Ms, 1)} ms, max ${fmt(d.maxMs, 1)} ms ` +
        `(${daily.body.points.length} points, ${totals.sent.toLocaleString('en-US')} sent); medians: ` +
        Object.entries(others)
          .map(([k, v]) => `${k} ${fmt(v.medianMs, 1)} ms`)
          .join(', ') +
        `; the same daily counts from events directly: ${fmt(raw.seconds * 1000)} ms`,
    };
  },
};
