import { randomBytes } from 'node:crypto';
import { createSegment, feedTriggers, fmt, median, r1, runAutocannon, setFeedTriggers } from '../lib/segments.mjs';

/**
 * What the change feed costs POST /v1/track. On a Pigeon of its own (per variant, below), in one
 * run, interleaved: `--duration` seconds of track load with
 * the feed triggers (events_feed, contacts_feed_insert, contacts_feed_update) enabled, then the
 * same with them disabled (ALTER TABLE … DISABLE TRIGGER), 3 rounds each, after a 5 s warm-up (with the feed).
 * The requests are those of the `track` scenario, with data that changes on every request (so the
 * update trigger has something to record): half for a new contact, half for one of 10,000 known
 * ones. Target: the median req/s with the feed ≥ 90% of the median without. The triggers are
 * enabled again at the end, whatever happens.
 *
 * Variants: `feed` has no segments and no workflows (what the feed itself costs: its rows, and
 * consumers reading past changes they do not want); `segments20` has 20 tracked DYNAMIC segments
 * in the project (15 × `data.score greaterThan 5, 10, …, 75`, 5 × `data.plan equals` a plan), so
 * every change is evaluated against all 20 and moves become member rows and entry/exit events.
 * The requests carry no score (the score segments are evaluated on every change and never
 * match); the plan (20% "pro") is the churn: a new contact enters one plan segment, and about a
 * third of the known contacts' writes move one out of a plan segment and into another, so about
 * 0.8 entry/exit events per track. With scores that put every new contact into ~10 segments
 * (six membership events per track, each an event, a member row and a feed row) the ratio was
 * 46–49% (2026-11-25): the cost of the events recorded, not of the feed.
 */
const PLANS = ['free', 'pro', 'team', 'enterprise', 'trial'];
const SEGMENT_RULES = [
  ...Array.from({ length: 15 }, (_, i) => ({ field: 'data.score', operator: 'greaterThan', value: 5 * (i + 1) })),
  ...PLANS.map((plan) => ({ field: 'data.plan', operator: 'equals', value: plan })),
];
const ROUNDS = 3;
const WARMUP_SECONDS = 5;

export default {
  name: 'track-feed-overhead',
  description: `POST /v1/track with the change feed triggers enabled vs disabled, ${ROUNDS} interleaved rounds each`,
  pigeonEnv: {},
  variants: [
    { name: 'feed', description: 'no segments, no workflows' },
    { name: 'segments20', description: '20 tracked segments' },
  ],
  target: {
    metric: 'feedRatioPercent',
    min: 90,
    unit: '%',
    digits: 1,
    label: 'track req/s with the feed ≥ 90% of without (medians)',
  },
  async setup(ctx) {
    const triggers = await feedTriggers(ctx);
    const off = triggers.filter((t) => t.enabled === 'D');
    if (off.length) throw new Error(`feed triggers disabled before the run: ${off.map((t) => t.name).join(', ')}`);
    if (this.variant === 'segments20') {
      for (const [i, filter] of SEGMENT_RULES.entries()) {
        await createSegment(ctx, {
          name: `tracked ${i}: ${filter.field} ${filter.operator} ${filter.value}`,
          trackMembership: true,
          condition: { logic: 'AND', groups: [{ filters: [filter] }] },
        });
      }
    }
    const tag = randomBytes(4).toString('hex');
    let n = 0;
    ctx.state.nextBody = () => {
      const existing = Math.random() < 0.5;
      const email = existing
        ? `known-${Math.floor(Math.random() * 10_000)}@feed.example`
        : `new-${tag}-${++n}@feed.example`;
      return JSON.stringify({
        email,
        event: Math.random() < 0.5 ? 'page-view' : 'clicked',
        data: { plan: Math.random() < 0.2 ? 'pro' : 'free', step: ++n % 1000 },
      });
    };
    const probe = await ctx.fetch('/v1/track', {
      method: 'POST',
      headers: ctx.publicAuth,
      json: { email: `probe-${tag}@feed.example`, event: 'probe' },
    });
    if (probe.status !== 200) throw new Error(`track probe answered ${probe.status}: ${await probe.text()}`);
  },
  async run(ctx) {
    const opts = (duration) => ({
      url: `${ctx.baseUrl}/v1/track`,
      connections: ctx.connections,
      duration,
      requests: [
        {
          method: 'POST',
          headers: { ...ctx.publicAuth, 'content-type': 'application/json' },
          setupRequest: (req) => ({ ...req, body: ctx.state.nextBody() }),
        },
      ],
    });
    const runs = { with: [], without: [] };
    let failures = 0;
    // Feed rows written and consumer batches (cursor updates), from PostgreSQL's table statistics:
    // approximate (backends report them at most once a second, hence the pause after a phase).
    const feedStats = async () => {
      const { rows } = await ctx.sql(
        `SELECT relname, n_tup_ins::bigint AS ins, n_tup_upd::bigint AS upd FROM pg_stat_user_tables
         WHERE relname IN ('contact_changes', 'change_feed_cursors')`,
      );
      const of = (name) => rows.find((r) => r.relname === name) ?? { ins: 0, upd: 0 };
      return { changes: Number(of('contact_changes').ins), batches: Number(of('change_feed_cursors').upd) };
    };
    const phase = async (feed) => {
      const f0 = await feedStats();
      const c0 = ctx.cpu();
      const r = await runAutocannon(ctx, opts(ctx.duration));
      const c1 = ctx.cpu();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const f1 = await feedStats();
      const wall = (c1.at - c0.at) / 1000;
      failures += r.non2xx + r.errors;
      const m = {
        reqPerSec: r1(r.requests.average),
        p50Ms: r.latency.p50,
        p99Ms: r.latency.p99,
        requests: r.requests.total,
        pigeonCpuUsPerReq: r.requests.total ? Math.round(((c1.pigeon - c0.pigeon) / r.requests.total) * 1e6) : null,
        dbCpuUsPerReq: r.requests.total ? Math.round(((c1.db - c0.db) / r.requests.total) * 1e6) : null,
        feedChanges: f1.changes - f0.changes,
        consumerBatches: f1.batches - f0.batches,
        otherCpuPercentOfCore: r1(
          (Math.max(
            0,
            c1.machine - c0.machine - (c1.pigeon - c0.pigeon) - (c1.db - c0.db) - (c1.harness - c0.harness),
          ) /
            wall) *
            100,
        ),
      };
      runs[feed ? 'with' : 'without'].push(m);
      console.log(
        `  feed ${feed ? 'on ' : 'off'}: ${fmt(m.reqPerSec)} req/s, p50 ${m.p50Ms} ms, p99 ${m.p99Ms} ms, ` +
          `Pigeon ${m.pigeonCpuUsPerReq} µs/req, DB ${m.dbCpuUsPerReq} µs/req; ` +
          `feed ${m.feedChanges} changes, ${m.consumerBatches} consumer batches`,
      );
    };
    try {
      await runAutocannon(ctx, opts(WARMUP_SECONDS));
      // The warm-up took the tables from empty to thousands of rows; without fresh statistics the
      // first measured phase ran plans made for empty tables until autovacuum's analyze came by
      // (that phase, always one with the feed, measured half the others).
      await ctx.sql('ANALYZE contacts, events, contact_changes');
      for (let round = 0; round < ROUNDS; round++) {
        await setFeedTriggers(ctx, true);
        await phase(true);
        await setFeedTriggers(ctx, false);
        await phase(false);
      }
    } finally {
      if (!ctx.signal.aborted) await setFeedTriggers(ctx, true);
    }
    const after = await feedTriggers(ctx);
    const med = (side, k) => median(runs[side].map((m) => m[k]));
    const withRps = med('with', 'reqPerSec');
    const withoutRps = med('without', 'reqPerSec');
    const ratio = (withRps / withoutRps) * 100;
    const show = (side) =>
      runs[side]
        .map(
          (m) =>
            `${fmt(m.reqPerSec)} req/s (p99 ${m.p99Ms} ms, ${m.pigeonCpuUsPerReq}+${m.dbCpuUsPerReq} µs/req, other ${m.otherCpuPercentOfCore}%)`,
        )
        .join(', ');
    ctx.note(`with the feed, by round: ${show('with')}`);
    ctx.note(
      `change feed during the phases with it (pg_stat_user_tables, approximate): ` +
        runs.with
          .map(
            (m) =>
              `${fmt(m.feedChanges)} changes read in ${fmt(m.consumerBatches)} consumer batches ` +
              `(${m.consumerBatches ? fmt(m.feedChanges / m.consumerBatches, 1) : '–'} a batch)`,
          )
          .join(', ') +
        `; without it: ${runs.without.map((m) => `${fmt(m.feedChanges)} changes, ${fmt(m.consumerBatches)} batches`).join(', ')}`,
    );
    ctx.note(`without the feed, by round: ${show('without')}`);
    ctx.note(
      `medians: with ${fmt(withRps)} req/s (p99 ${fmt(med('with', 'p99Ms'))} ms, Pigeon ${fmt(med('with', 'pigeonCpuUsPerReq'))} + ` +
        `DB ${fmt(med('with', 'dbCpuUsPerReq'))} µs/req), without ${fmt(withoutRps)} req/s (p99 ${fmt(med('without', 'p99Ms'))} ms, ` +
        `Pigeon ${fmt(med('without', 'pigeonCpuUsPerReq'))} + DB ${fmt(med('without', 'dbCpuUsPerReq'))} µs/req); ` +
        `${ctx.connections} connections, ${ctx.duration} s per phase; triggers after the run: ` +
        after.map((t) => `${t.name} ${t.enabled === 'D' ? 'disabled' : 'enabled'}`).join(', '),
    );
    const problems = [];
    if (failures) problems.push(`${fmt(failures)} non-2xx responses or errors`);
    if (after.some((t) => t.enabled === 'D')) problems.push('a feed trigger is still disabled');
    return {
      feedRatioPercent: r1(ratio),
      withFeedReqPerSec: withRps,
      withoutFeedReqPerSec: withoutRps,
      rounds: runs,
      ...(problems.length && { problem: problems.join('; ') }),
      summary: `track with feed ${fmt(withRps)} req/s vs without ${fmt(withoutRps)} req/s (medians of ${ROUNDS}): ${fmt(ratio, 1)}%`,
    };
  },
};
