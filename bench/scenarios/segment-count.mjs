import {
  countSql,
  createSegment,
  dataEquals,
  explain,
  fmt,
  pageSql,
  r1,
  recountSql,
  timeSequential,
  waitFeedDrained,
} from '../lib/segments.mjs';

/**
 * A DYNAMIC segment `data.plan equals "pro"` over the 1,000,000 contacts of the contacts-1m fixture
 * (every 5th seeded contact is "pro": ~200,000 members). Timed task: POST /segments/:id/refresh
 * (the recount) 1 + 7 times and GET /segments/:id/contacts?page=1&pageSize=20 (the first page of
 * members, with its total) 2 + 15 times, one request at a time; the medians are the targets.
 * The counts are checked against a count in SQL.
 */
const REFRESHES = 7;
const PAGES = 15;
const CONDITION = { logic: 'AND', groups: [{ filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }] }] };
const SQL_CONDITION = dataEquals('plan', 'pro');

export default {
  name: 'segment-count',
  description:
    'segment data.plan equals "pro" (~20% of 1,000,000 contacts): POST /segments/:id/refresh and ' +
    'GET /segments/:id/contacts first page, sequential medians',
  fixtures: ['contacts-1m'],
  target: [
    { metric: 'refreshMedianMs', max: 200, unit: 'ms', label: `refresh (count) median of ${REFRESHES} ≤ 200 ms` },
    { metric: 'firstPageMedianMs', max: 20, unit: 'ms', digits: 1, label: 'members first page median ≤ 20 ms' },
  ],
  async setup(ctx) {
    // The seed's million changes read by the feed consumers first: not during the timed part.
    const drained = await waitFeedDrained(ctx);
    if (drained !== null) ctx.note(`waited ${fmt(drained, 1)} s for the change feed to be read up to date`);
    const { segment, ms } = await createSegment(ctx, {
      name: `bench pro ${Date.now()}`,
      type: 'DYNAMIC',
      condition: CONDITION,
    });
    ctx.state.segment = segment;
    // The right answer, counted in SQL before the timed part (nothing changes the contacts after).
    ctx.state.expected = (await ctx.sql(countSql(SQL_CONDITION), [ctx.projectId])).rows[0].n;
    ctx.note(
      `POST /segments took ${fmt(ms)} ms (memberCount ${fmt(segment.memberCount)} at creation); ` +
        `condition ${JSON.stringify(CONDITION)}`,
    );
  },
  async run(ctx) {
    const { id } = ctx.state.segment;
    const refresh = await timeSequential(ctx, { method: 'POST', path: `/segments/${id}/refresh`, n: REFRESHES });
    const page = await timeSequential(ctx, {
      path: `/segments/${id}/contacts?page=1&pageSize=20`,
      n: PAGES,
      warmup: 2,
    });
    const { expected } = ctx.state;
    const problems = [];
    if (refresh.body?.memberCount !== expected)
      problems.push(`refresh memberCount ${refresh.body?.memberCount} ≠ ${expected} in SQL`);
    const rows = page.body?.data ?? [];
    if (rows.length !== 20) problems.push(`first page has ${rows.length} contacts, not 20`);
    const notPro = rows.filter((c) => c.data?.plan !== 'pro').length;
    if (notPro) problems.push(`${notPro} of the first page's contacts are not "pro"`);
    if (page.body?.total !== undefined && page.body.total !== expected)
      problems.push(`first page total ${page.body.total} ≠ ${expected} in SQL`);
    // Which order the members come in, for the hand-written page query of diagnose().
    if (rows.length > 1) ctx.state.order = rows[0].createdAt >= rows[rows.length - 1].createdAt ? 'DESC' : 'ASC';
    ctx.note(
      `refresh ×${REFRESHES} (after 1 untimed): ${refresh.ms.map((v) => fmt(v)).join(', ')} ms; ` +
        `first page ×${PAGES} (after 2 untimed): min ${fmt(page.minMs, 1)}, max ${fmt(page.maxMs, 1)} ms`,
    );
    return {
      refreshMedianMs: r1(refresh.medianMs),
      refreshMinMs: r1(refresh.minMs),
      refreshMaxMs: r1(refresh.maxMs),
      firstPageMedianMs: r1(page.medianMs),
      firstPageMaxMs: r1(page.maxMs),
      memberCount: refresh.body?.memberCount ?? null,
      expectedCount: expected,
      pageTotal: page.body?.total ?? null,
      ...(problems.length && { problem: problems.join('; ') }),
      summary:
        `${fmt(expected)} members of 1M: refresh median ${fmt(refresh.medianMs)} ms, ` +
        `first page median ${fmt(page.medianMs, 1)} ms`,
    };
  },
  async diagnose(ctx) {
    await explain(ctx, 'count of data.plan = "pro"', countSql(SQL_CONDITION));
    await explain(ctx, 'the same count inside the recount UPDATE', recountSql(SQL_CONDITION), {
      settle: false,
      values: [ctx.projectId, ctx.state.segment.id],
      rollback: true,
    });
    await explain(ctx, 'first page of members', pageSql(SQL_CONDITION, { order: ctx.state.order ?? 'DESC' }), {
      settle: false,
    });
  },
};
