import { fmt, percentile, r1, timeSequential } from '../lib/segments.mjs';

/**
 * The hot reads over a year of history against the same reads on an empty project (issue 26).
 * Measured first on the empty project, then after seeding it with `BENCH_HISTORY_EVENTS` events
 * (default 1,000,000; the issue's full size is 50,000,000) and a tenth as many emails spread over
 * 365 days into their monthly partitions (db/history-seed.ts: one INSERT … SELECT per table), each
 * read `BENCH_HISTORY_RUNS` times (default 20) one at a time after 2 untimed ones. Target: every
 * read's p95 on the full project ≤ 1.2 × on the empty one (plus 2 ms, below which a ratio of
 * sub-millisecond reads is noise).
 */
const EVENTS = Number(process.env.BENCH_HISTORY_EVENTS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_HISTORY_RUNS ?? 20);
const SLACK_MS = 2;

const reads = (contactId) => ({
  eventsPage: '/events?limit=50',
  eventsLast7Days: `/events?limit=50&from=${new Date(Date.now() - 7 * 86_400_000).toISOString()}`,
  eventStats30d: '/events/stats',
  activityPage: '/activity?limit=50',
  contactActivity: `/activity?limit=50&contactId=${contactId}`,
  contactEvents: `/events/contact/${contactId}?limit=50`,
  analytics30d: '/analytics/timeseries',
  campaignStats: '/analytics/campaign-stats',
});

async function timeAll(ctx, contactId) {
  const out = {};
  for (const [name, path] of Object.entries(reads(contactId))) {
    const t = await timeSequential(ctx, { path, n: RUNS, warmup: 2 });
    // percentile() wants the samples sorted; in request order its "p95" was just the 19th of 20.
    const sorted = [...t.ms].sort((a, b) => a - b);
    out[name] = { p95Ms: r1(percentile(sorted, 95)), medianMs: r1(t.medianMs) };
  }
  return out;
}

/** seedHistory wants a pool; the harness's one connection serves as its single session. */
const harnessPool = (ctx) => ({
  connect: async () => ({ query: (text, values) => ctx.sql(text, values), release() {} }),
});

export default {
  name: 'history',
  description: `hot reads over ${EVENTS.toLocaleString('en-US')} events and ${(EVENTS / 10).toLocaleString('en-US')} emails in 12 monthly partitions vs an empty project`,
  pigeonEnv: {},
  target: { metric: 'worstRatio', max: 1.2, digits: 2, label: 'every hot read p95 ≤ 1.2 × empty (+2 ms)' },
  async setup(ctx) {
    // A contact to page the activity of: on the empty project, one tracked event.
    await ctx.json('/v1/track', {
      method: 'POST',
      headers: ctx.auth,
      json: { email: 'bench-tracked@example.com', event: 'bench.history' },
    });
    const contact = (
      await ctx.sql(`SELECT id FROM contacts WHERE project_id = $1 AND email = 'bench-tracked@example.com'`, [
        ctx.projectId,
      ])
    ).rows[0].id;
    ctx.state.contact = contact;
    ctx.state.empty = await timeAll(ctx, contact);
    await ctx.sql(`SELECT history_partition_ensure(t, m::date) FROM unnest(ARRAY['events', 'emails']) t,
      generate_series(date_trunc('month', now() - interval '13 months'), now(), interval '1 month') m`);
    const { seedHistory } = await import('../../packages/server/dist/bench.js');
    const t0 = performance.now();
    await seedHistory(harnessPool(ctx), {
      projectId: ctx.projectId,
      contacts: 10_000,
      emails: EVENTS / 10,
      events: EVENTS,
      days: 365,
    });
    // The tracked contact gets its share of history too.
    await ctx.sql(
      `INSERT INTO events (id, project_id, contact_id, name, data, created_at)
       SELECT uuidv7_compat(), $1, $2, 'page.viewed', '{}', now() FROM generate_series(1, 200)`,
      [ctx.projectId, contact],
    );
    await ctx.sql('VACUUM ANALYZE events, emails');
    ctx.state.seedSeconds = r1((performance.now() - t0) / 1000);
    // Table and index sizes over every partition, for the capacity figures (ARCHITECTURE.md "Beyond one primary").
    const sizes = (
      await ctx.sql(
        `SELECT p.relname AS table, count(*)::int AS partitions,
                sum(pg_table_size(i.inhrelid))::float8 AS heap, sum(pg_indexes_size(i.inhrelid))::float8 AS indexes
         FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent
         WHERE p.relname IN ('events', 'emails') GROUP BY p.relname ORDER BY p.relname`,
      )
    ).rows;
    const mb = (bytes) => fmt(bytes / 1_048_576, 0);
    ctx.state.sizes = Object.fromEntries(sizes.map((t) => [t.table, { heapBytes: t.heap, indexBytes: t.indexes }]));
    ctx.note(
      `seeded in ${fmt(ctx.state.seedSeconds, 1)} s; ${sizes
        .map((t) => `${t.table} ${mb(t.heap)} MB + ${mb(t.indexes)} MB indexes in ${t.partitions} partitions`)
        .join('; ')}`,
    );
  },
  async run(ctx) {
    const full = await timeAll(ctx, ctx.state.contact);
    const ratioOf = (k) => Math.max(0, full[k].p95Ms - SLACK_MS) / Math.max(ctx.state.empty[k].p95Ms, 0.1);
    const ratios = Object.fromEntries(Object.keys(full).map((k) => [k, Number(ratioOf(k).toFixed(2))]));
    const worst = Object.keys(full).reduce((a, k) => (ratioOf(k) > ratioOf(a) ? k : a));
    return {
      worstRatio: Number(ratioOf(worst).toFixed(2)),
      worstRead: worst,
      empty: ctx.state.empty,
      full,
      ratios,
      events: EVENTS,
      seedSeconds: ctx.state.seedSeconds,
      sizes: ctx.state.sizes,
      summary: `worst p95 ratio ${ratioOf(worst).toFixed(2)} (${worst}: ${full[worst].p95Ms} ms vs ${ctx.state.empty[worst].p95Ms} ms empty)`,
    };
  },
};
