import { bulkLoad, ROLLUP_SQL } from '../lib/bulk-load.mjs';
import { fmt, percentile, r1, waitFeedDrained } from '../lib/segments.mjs';

/**
 * The hot reads over a year of history, and a track, against the same on an empty project (issue 26).
 * One project is seeded with `BENCH_HISTORY_EVENTS` events (default 1,000,000; the issue's full
 * size is 50,000,000) and a tenth as many emails spread over 365 days into their monthly
 * partitions (db/history-seed.ts: one INSERT … SELECT per table, loaded as a restore would:
 * bench/lib/bulk-load.mjs, then counted into the analytics rollup as the feed's consumer would have); a second project, made through
 * the API after the seed, stays empty but for one tracked event. Each read is timed
 * `BENCH_HISTORY_RUNS` times (default 200: a p95 of 40 is their second-largest) on both projects,
 * alternating one request on each after 2 untimed ones, so both sides see the same load on a shared machine (measuring the empty side
 * minutes before the full one made the ratio follow the machine's load). Target: every read's p95
 * on the full project ≤ 1.2 × on the empty one (plus 2 ms, below which a ratio of sub-millisecond
 * reads is noise).
 */
const EVENTS = Number(process.env.BENCH_HISTORY_EVENTS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_HISTORY_RUNS ?? 200);
const SLACK_MS = 2;

/** The hot reads (GET paths) and the track, for a project's tracked contact and tracked segment. */
const reads = ({ contact: contactId, segment, cursor }) => ({
  eventsPage: '/events?limit=50',
  eventsPageAfterCursor: `/events?limit=50&cursor=${cursor}`,
  eventsLast7Days: `/events?limit=50&from=${new Date(Date.now() - 7 * 86_400_000).toISOString()}`,
  eventStats30d: '/events/stats',
  activityPage: '/activity?limit=50',
  contactActivity: `/activity?limit=50&contactId=${contactId}`,
  contactEvents: `/events/contact/${contactId}?limit=50`,
  analytics30d: '/analytics/timeseries',
  campaignStats: '/analytics/campaign-stats',
  segmentMembers: `/segments/${segment}/contacts?limit=50`,
  emailsPage: '/emails?limit=50',
  track: { method: 'POST', path: '/v1/track', json: { email: TRACKED_EMAIL, event: 'bench.history' } },
});

async function timed(ctx, request, auth) {
  const { method = 'GET', path, json } = typeof request === 'string' ? { path: request } : request;
  const t0 = performance.now();
  const res = await ctx.fetch(path, { method, headers: auth, ...(json && { json }) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 500)}`);
  return performance.now() - t0;
}

const summary = (ms) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return { p95Ms: r1(percentile(sorted, 95)), medianMs: r1(percentile(sorted, 50)) };
};

/** Each read on the empty and the full project, one request on each in turn. */
async function timeInterleaved(ctx, empty, full) {
  const out = { empty: {}, full: {} };
  const emptyReads = reads(empty);
  for (const [name, path] of Object.entries(reads(full))) {
    const ms = { empty: [], full: [] };
    for (let i = 0; i < RUNS + 2; i++) {
      const e = await timed(ctx, emptyReads[name], empty.auth);
      const f = await timed(ctx, path, full.auth);
      if (i >= 2) {
        ms.empty.push(e);
        ms.full.push(f);
      }
    }
    out.empty[name] = summary(ms.empty);
    out.full[name] = summary(ms.full);
  }
  return out;
}

const TRACKED_EMAIL = 'bench-tracked@example.com';

/** A contact with one tracked event in the project of `auth`; answers its id. */
async function trackedContact(ctx, auth) {
  const res = await ctx.json('/v1/track', {
    method: 'POST',
    headers: auth,
    json: { email: TRACKED_EMAIL, event: 'bench.history' },
  });
  return res.data.contact;
}

/** A segment of the subscribed contacts that tracks its members (member rows written at creation); answers its id. */
async function trackedSegment(ctx, auth) {
  const segment = await ctx.json('/segments', {
    method: 'POST',
    headers: auth,
    json: {
      name: 'Subscribed',
      condition: { logic: 'AND', groups: [{ filters: [{ field: 'subscribed', operator: 'equals', value: true }] }] },
      trackMembership: true,
    },
  });
  return segment.id;
}

/** A second project through the API (a new account and its project), for the empty side. */
async function emptyProject(ctx) {
  const signup = await ctx.fetch('/auth/signup', {
    method: 'POST',
    json: { email: `bench-history-${Date.now()}@example.com`, password: 'correct horse battery' },
  });
  if (signup.status !== 201) throw new Error(`signup → ${signup.status}: ${await signup.text()}`);
  const cookie = /pigeon_session=[^;]+/.exec(signup.headers.get('set-cookie') ?? '')?.[0] ?? '';
  const project = await ctx.json('/users/@me/projects', {
    method: 'POST',
    headers: { cookie },
    json: { name: 'Empty history' },
  });
  const auth = { authorization: `Bearer ${project.secretKey}` };
  return { auth, contact: await trackedContact(ctx, auth), segment: await trackedSegment(ctx, auth) };
}

/**
 * The cursor after a project's first events page: the one the page answers, or (a project with
 * fewer events than a page) one made from its last row, the way the API makes them.
 */
async function firstPageCursor(ctx, auth) {
  const page = await ctx.json('/events?limit=50', { headers: auth });
  const last = page.data.at(-1);
  return page.cursor ?? Buffer.from(JSON.stringify({ v: last.createdAt, id: last.id })).toString('base64url');
}

/** seedHistory wants a pool; the harness's one connection serves as its single session. */
const harnessPool = (ctx) => ({
  connect: async () => ({ query: (text, values) => ctx.sql(text, values), release() {} }),
});

/**
 * The database work of the reads this scenario changed, before and after (issue 26), in shared
 * buffers (which do not move with the machine's load) and execution time: the first page's
 * `total` as a full count and as the count capped at 10,001 rows, and `/events/stats` from raw
 * events (its two statements) and from the rollup.
 */
const WORK = {
  'events page, every month (before)': `SELECT e.*, e.created_at::text AS sort_value, c.email AS contact_email
    FROM events e LEFT JOIN contacts c ON c.id = e.contact_id WHERE e.project_id = $1
    ORDER BY e.created_at DESC, e.id DESC LIMIT 51`,
  'events page, the ids of the last two days (after)': `SELECT e.*, e.created_at::text AS sort_value, c.email AS contact_email
    FROM events e LEFT JOIN contacts c ON c.id = e.contact_id
    WHERE e.project_id = $1 AND e.id >= uuidv7_floor(now() - interval '2 days')
    ORDER BY e.created_at DESC, e.id DESC LIMIT 51`,
  'events page in one statement, the recent ids kept or the whole history behind a one-time filter (tried, reverted)': `WITH recent AS MATERIALIZED (
      SELECT e.*, e.created_at::text AS sort_value, c.email AS contact_email
      FROM events e LEFT JOIN contacts c ON c.id = e.contact_id
      WHERE e.project_id = $1 AND e.id >= uuidv7_floor(now() - interval '2 days')
      ORDER BY e.created_at DESC, e.id DESC LIMIT 51),
    enough AS (SELECT count(*) = 51 AND min(created_at) >= now() - interval '1 day' AS yes FROM recent)
    SELECT * FROM recent WHERE (SELECT yes FROM enough)
    UNION ALL
    (SELECT e.*, e.created_at::text AS sort_value, c.email AS contact_email
      FROM events e LEFT JOIN contacts c ON c.id = e.contact_id
      WHERE e.project_id = $1 AND NOT (SELECT yes FROM enough)
      ORDER BY e.created_at DESC, e.id DESC LIMIT 51)
    ORDER BY created_at DESC, id DESC`,
  'total, full count (before)': `SELECT count(*) FROM events e WHERE e.project_id = $1`,
  'total, capped at 10,001 (after)': `SELECT count(*) FROM (SELECT 1 FROM events e WHERE e.project_id = $1 LIMIT 10001) m`,
  'stats by name, 30 days of raw events (before)': `SELECT name, count(*) FROM events WHERE project_id = $1
    AND created_at >= now() - interval '30 days' AND id >= uuidv7_floor(now() - interval '31 days') GROUP BY name`,
  'stats by day, 30 days of raw events (before)': `SELECT date_trunc('day', created_at AT TIME ZONE 'UTC'), count(*) FROM events
    WHERE project_id = $1 AND created_at >= now() - interval '30 days' AND id >= uuidv7_floor(now() - interval '31 days') GROUP BY 1`,
  'stats by name and day, 720 rollup hours (after)': `SELECT name, to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD'), sum(count)
    FROM event_counts WHERE project_id = $1 AND hour >= date_trunc('hour', now()) - interval '30 days' GROUP BY 1, 2`,
};

/** A plan's nodes, depth first, with their actual time and buffers: `Limit 0.9 ms/12 [Merge Append …]`. */
function planOutline(node) {
  const self = `${node['Node Type']}${node['Relation Name'] ? ` ${node['Relation Name']}` : ''} ${fmt(node['Actual Total Time'], 2)} ms/${fmt(node['Shared Hit Blocks'] + node['Shared Read Blocks'])}`;
  const children = node.Plans ?? [];
  if (children.length > 4) return `${self} [${children.length} × ${planOutline(children[0])} …]`;
  return children.length ? `${self} [${children.map(planOutline).join(', ')}]` : self;
}

/**
 * The two page statements as named prepared statements: after five executions PostgreSQL may keep a
 * generic plan (no planning per call; partitions pruned at run time) or go on planning each call
 * (`plan_cache_mode` auto, when a custom plan looks cheaper).
 */
const PREPARED = {
  'events page, every month, prepared': {
    text: `SELECT e.*, e.created_at::text AS sort_value, c.email AS contact_email
      FROM events e LEFT JOIN contacts c ON c.id = e.contact_id WHERE e.project_id = $1
      ORDER BY e.created_at DESC, e.id DESC LIMIT $2`,
    values: (ctx) => [ctx.projectId, 51],
  },
  'events page, the ids of the last two days, prepared': {
    text: `SELECT e.*, e.created_at::text AS sort_value, c.email AS contact_email
      FROM events e LEFT JOIN contacts c ON c.id = e.contact_id
      WHERE e.project_id = $1 AND e.id >= uuidv7_floor($2::timestamptz - interval '1 day')
      ORDER BY e.created_at DESC, e.id DESC LIMIT $3`,
    values: (ctx) => [ctx.projectId, new Date(Date.now() - 86_400_000), 51],
  },
};

/** EXECUTE takes literals (a utility statement has no parameters of its own). */
const literal = (v) => (typeof v === 'number' ? String(v) : `'${v instanceof Date ? v.toISOString() : v}'`);

/** Each prepared page statement run 8 times under each plan cache mode; the last run explained. */
async function explainPrepared(ctx) {
  let n = 0;
  for (const mode of ['auto', 'force_generic_plan']) {
    await ctx.sql(`SET plan_cache_mode = ${mode}`);
    for (const [label, { text, values }] of Object.entries(PREPARED)) {
      const name = `bench_page_${n++}`;
      await ctx.sql(`PREPARE ${name} AS ${text}`);
      const execute = `EXECUTE ${name}(${values(ctx).map(literal).join(', ')})`;
      for (let i = 0; i < 7; i++) await ctx.sql(execute);
      const [plan] = (await ctx.sql(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${execute}`)).rows[0]['QUERY PLAN'];
      const [used] = (
        await ctx.sql('SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1', [name])
      ).rows;
      ctx.note(
        `${label} (plan_cache_mode ${mode}): ${fmt(plan['Execution Time'], 2)} ms (planning ${fmt(plan['Planning Time'] ?? 0, 2)} ms); ` +
          `generic plans ${used.generic_plans}, custom ${used.custom_plans}; ${planOutline(plan.Plan)}`,
      );
      await ctx.sql(`DEALLOCATE ${name}`);
    }
  }
  await ctx.sql('RESET plan_cache_mode');
}

async function explainWork(ctx) {
  await explainPrepared(ctx);
  for (const [label, text] of Object.entries(WORK)) {
    // Twice: the second is the one noted, planned on a connection whose caches the first filled.
    await ctx.sql(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, [ctx.projectId]);
    const [plan] = (await ctx.sql(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, [ctx.projectId])).rows[0][
      'QUERY PLAN'
    ];
    const buffers = plan.Plan['Shared Hit Blocks'] + plan.Plan['Shared Read Blocks'];
    ctx.note(
      `${label}: ${fmt(buffers)} shared buffers, ${fmt(plan['Execution Time'], 1)} ms (planning ${fmt(plan['Planning Time'], 1)} ms); ${planOutline(plan.Plan)}`,
    );
  }
}

export default {
  name: 'history',
  description: `hot reads over ${EVENTS.toLocaleString('en-US')} events and ${(EVENTS / 10).toLocaleString('en-US')} emails in 12 monthly partitions vs an empty project`,
  pigeonEnv: {},
  target: { metric: 'worstRatio', max: 1.2, digits: 2, label: 'every hot read p95 ≤ 1.2 × empty (+2 ms)' },
  diagnose: explainWork,
  async setup(ctx) {
    // The full project's tracked contact gets its share of history below.
    ctx.state.contact = await trackedContact(ctx, ctx.auth);
    const contact = ctx.state.contact;
    await ctx.sql(`SELECT history_partition_ensure(t, m::date) FROM unnest(ARRAY['events', 'emails']) t,
      generate_series(date_trunc('month', now() - interval '13 months'), now(), interval '1 month') m`);
    const { seedHistory } = await import('../../packages/server/dist/bench.js');
    const t0 = performance.now();
    // A bulk load of the events (bench/lib/bulk-load.mjs): at 50M, the feed's 50M rows and one
    // index insert per row and index took over an hour before the first read could be timed. Not of
    // the emails: the delivery loops' claims read them through an index every second meanwhile.
    ctx.state.load = await bulkLoad(ctx, ['events'], () =>
      seedHistory(harnessPool(ctx), {
        projectId: ctx.projectId,
        contacts: 10_000,
        emails: EVENTS / 10,
        events: EVENTS,
        days: 365,
      }),
    );
    // What the skipped triggers would have done: the project's contact counts, and the rollup of
    // the seeded events (the tracked contact's own track went through the feed, and is its consumer's).
    await ctx.sql(
      `SELECT contact_counts_add(project_id, count(*), count(*) FILTER (WHERE subscribed))
       FROM contacts WHERE project_id = $1 AND email LIKE 'history-%' GROUP BY project_id`,
      [ctx.projectId],
    );
    await ctx.sql(ROLLUP_SQL, [ctx.projectId, ['bench.history']]);
    // The tracked contact gets its share of history too, through the feed.
    await ctx.sql(
      `INSERT INTO events (id, project_id, contact_id, name, data, created_at)
       SELECT uuidv7_compat(), $1, $2, 'page.viewed', '{}', now() FROM generate_series(1, 200)`,
      [ctx.projectId, contact],
    );
    // Analysed as autovacuum would have over the year (the contacts too: without their statistics
    // the tracked segment's member page took 5.8 ms of median instead of 2.5).
    await ctx.sql('VACUUM ANALYZE events, emails, contacts');
    ctx.state.seedSeconds = r1((performance.now() - t0) / 1000);
    ctx.state.segment = await trackedSegment(ctx, ctx.auth);
    // A year of history has no backlog: whatever went through the change feed is read before anything is timed.
    const f0 = performance.now();
    await waitFeedDrained(ctx, 600_000);
    ctx.state.feedSeconds = r1((performance.now() - f0) / 1000);
    // And the rollup's finished hours folded, as `analytics.fold-counts` (every 10 minutes) leaves
    // them: an hour that is over has one row per name, campaign and template, not one per feed part.
    const { foldFinishedHours } = await import('../../packages/server/dist/bench.js');
    const hour = 3_600_000;
    const folded = await foldFinishedHours(
      { query: (text, values) => ctx.sql(text, values) },
      new Date(Math.floor(Date.now() / hour) * hour - hour),
      5_000,
    );
    // The job folds a few hours at a time and autovacuum follows; folding a year at once leaves 8×
    // as many dead rows as live ones, which a year of steady running would not have.
    await ctx.sql('VACUUM ANALYZE event_counts');
    const { rows: rollup } = await ctx.sql('SELECT count(*)::int AS n FROM event_counts');
    // The rollup counts every event of the project once, whichever way it got there (the feed's
    // consumer pauses up to 2 s between batches, so its last ones may land after the drain).
    for (let waited = 0; ; waited++) {
      const { rows: totals } = await ctx.sql(
        `SELECT (SELECT sum(count) FROM event_counts WHERE project_id = $1)::bigint AS counted,
                (SELECT count(*) FROM events WHERE project_id = $1 AND contact_id IS NOT NULL)::bigint AS stored`,
        [ctx.projectId],
      );
      if (totals[0].counted === totals[0].stored) break;
      if (waited === 60)
        throw new Error(`rollup counts ${totals[0].counted} events, the project has ${totals[0].stored}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    ctx.state.rollup = { folded, rows: rollup[0].n };
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
      `seeded in ${fmt(ctx.state.seedSeconds, 1)} s (rows ${fmt(ctx.state.load.load, 1)} s, indexes ${fmt(ctx.state.load.indexes, 1)} s, analyse ${fmt(ctx.state.load.analyze, 1)} s), ` +
        `the change feed drained in ${fmt(ctx.state.feedSeconds, 1)} s; ` +
        `rollup: ${fmt(ctx.state.rollup.folded)} per-part rows folded, ${fmt(ctx.state.rollup.rows)} rows left; ${sizes
          .map((t) => `${t.table} ${mb(t.heap)} MB + ${mb(t.indexes)} MB indexes in ${t.partitions} partitions`)
          .join('; ')}`,
    );
  },
  async run(ctx) {
    const empty = await emptyProject(ctx);
    empty.cursor = await firstPageCursor(ctx, empty.auth);
    const t = await timeInterleaved(ctx, empty, {
      auth: ctx.auth,
      contact: ctx.state.contact,
      segment: ctx.state.segment,
      cursor: await firstPageCursor(ctx, ctx.auth),
    });
    const full = t.full;
    ctx.state.empty = t.empty;
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
