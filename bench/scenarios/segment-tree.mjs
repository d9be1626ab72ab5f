import {
  conditionSql,
  countSql,
  createSegment,
  explain,
  fmt,
  r1,
  recountSql,
  timeSequential,
  waitFeedDrained,
} from '../lib/segments.mjs';

/**
 * A three-level AND / OR condition over the 1,000,000 contacts of the contacts-1m fixture, with a
 * numeric range on data.age and `event.<name> triggered` filters:
 *
 *   plan = "pro" AND ( purchase triggered
 *                      OR (25 ≤ age < 45 AND page-view triggered)
 *                      OR age > 70 )
 *
 * Setup seeds the events once: a `purchase` for ~25% of the contacts and a `page-view` for another
 * ~10% (by a hash of the contact id, so independent of plan and age), created at random times in
 * the last 90 days, then VACUUM ANALYZE events. Timed task: POST /segments/:id/refresh 1 + 7
 * times, one at a time; the median is the target. The count is checked against the hand-written
 * SQL of the same condition (lib/segments.mjs `conditionSql`), whose plan `diagnose` shows.
 */
const REFRESHES = 7;
const PURCHASE_PERCENT = 25;
const PAGE_VIEW_PERCENT = 10;

const CONDITION = {
  logic: 'AND',
  groups: [
    { filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }] },
    {
      filters: [],
      conditions: {
        logic: 'OR',
        groups: [
          { filters: [{ field: 'event.purchase', operator: 'triggered' }] },
          {
            filters: [],
            conditions: {
              logic: 'AND',
              groups: [
                {
                  filters: [
                    { field: 'data.age', operator: 'greaterThanOrEqual', value: 25 },
                    { field: 'data.age', operator: 'lessThan', value: 45 },
                  ],
                },
                { filters: [{ field: 'event.page-view', operator: 'triggered' }] },
              ],
            },
          },
          { filters: [{ field: 'data.age', operator: 'greaterThan', value: 70 }] },
        ],
      },
    },
  ],
};
const SQL_CONDITION = conditionSql(CONDITION);

const SEED_EVENTS_SQL = `
  INSERT INTO events (id, project_id, contact_id, name, data, created_at)
  SELECT uuidv7_compat(), c.project_id, c.id,
         CASE WHEN h.v < ${PURCHASE_PERCENT} THEN 'purchase' ELSE 'page-view' END,
         '{}'::jsonb, now() - random() * interval '90 days'
  FROM contacts c CROSS JOIN LATERAL (SELECT abs(hashtext(c.id::text)) % 100 AS v) h
  WHERE c.project_id = $1 AND (h.v < ${PURCHASE_PERCENT} OR h.v >= ${100 - PAGE_VIEW_PERCENT})`;

export default {
  name: 'segment-tree',
  description:
    'segment plan = "pro" AND (purchase triggered OR (25 ≤ age < 45 AND page-view triggered) OR age > 70), ' +
    '1,000,000 contacts + events: POST /segments/:id/refresh, sequential median',
  fixtures: ['contacts-1m'],
  target: { metric: 'refreshMedianMs', max: 1000, unit: 'ms', label: `refresh (count) median of ${REFRESHES} ≤ 1 s` },
  async setup(ctx) {
    const names = ['purchase', 'page-view'];
    const existing = (
      await ctx.sql('SELECT count(*)::int AS n FROM events WHERE project_id = $1 AND name = ANY($2)', [
        ctx.projectId,
        names,
      ])
    ).rows[0].n;
    let seeded = 0;
    let t0 = performance.now();
    if (!existing) seeded = (await ctx.sql(SEED_EVENTS_SQL, [ctx.projectId])).rowCount;
    const insertS = (performance.now() - t0) / 1000;
    t0 = performance.now();
    await ctx.sql('VACUUM (ANALYZE) events');
    const vacuumS = (performance.now() - t0) / 1000;
    const drained = await waitFeedDrained(ctx);
    const { rows: counts } = await ctx.sql(
      'SELECT name, count(*)::int AS n FROM events WHERE project_id = $1 GROUP BY name ORDER BY n DESC',
      [ctx.projectId],
    );
    ctx.note(
      `events seeded: ${fmt(seeded)} rows in ${fmt(insertS, 1)} s, VACUUM ANALYZE ${fmt(vacuumS, 1)} s; ` +
        `events in the project: ${counts.map((r) => `${r.name} ${fmt(r.n)}`).join(', ')}` +
        (drained === null ? '' : `; waited ${fmt(drained, 1)} s for the change feed to be read up to date`),
    );
    ctx.state.expected = (await ctx.sql(countSql(SQL_CONDITION), [ctx.projectId])).rows[0].n;
    const { segment, ms } = await createSegment(ctx, {
      name: `bench tree ${Date.now()}`,
      type: 'DYNAMIC',
      condition: CONDITION,
    });
    ctx.state.segment = segment;
    ctx.note(`POST /segments took ${fmt(ms)} ms (memberCount ${fmt(segment.memberCount)} at creation)`);
  },
  async run(ctx) {
    const { id } = ctx.state.segment;
    const { expected } = ctx.state;
    const refresh = await timeSequential(ctx, { method: 'POST', path: `/segments/${id}/refresh`, n: REFRESHES });
    const page = await timeSequential(ctx, { path: `/segments/${id}/contacts?page=1&pageSize=20`, n: 5 });
    const problems = [];
    if (refresh.body?.memberCount !== expected)
      problems.push(`refresh memberCount ${refresh.body?.memberCount} ≠ ${expected} from the hand-written SQL`);
    if ((page.body?.data?.length ?? 0) !== Math.min(20, expected))
      problems.push(`first page has ${page.body?.data?.length} contacts`);
    ctx.note(
      `refresh ×${REFRESHES} (after 1 untimed): ${refresh.ms.map((v) => fmt(v)).join(', ')} ms; ` +
        `not a target: GET /segments/:id/contacts first page median ${fmt(page.medianMs, 1)} ms (×5 after 1)`,
    );
    return {
      refreshMedianMs: r1(refresh.medianMs),
      refreshMinMs: r1(refresh.minMs),
      refreshMaxMs: r1(refresh.maxMs),
      firstPageMedianMs: r1(page.medianMs),
      memberCount: refresh.body?.memberCount ?? null,
      expectedCount: expected,
      ...(problems.length && { problem: problems.join('; ') }),
      summary: `${fmt(expected)} members of 1M: refresh median ${fmt(refresh.medianMs)} ms`,
    };
  },
  async diagnose(ctx) {
    await explain(ctx, 'count of the three-level tree', countSql(SQL_CONDITION));
    await explain(ctx, 'the same count inside the recount UPDATE', recountSql(SQL_CONDITION), {
      settle: false,
      values: [ctx.projectId, ctx.state.segment.id],
      rollback: true,
    });
  },
};
