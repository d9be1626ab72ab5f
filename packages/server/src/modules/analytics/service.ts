import type { AnalyticsInterval, TopEventsType } from '@pigeon/contract';
import { ANALYTICS_METRICS, type AnalyticsMetric, type CampaignStatus } from '@pigeon/contract';
import { and, join, queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { notFound, validationFailed } from '../../kit/errors.js';
import { ratesOf } from '../../kit/mail-rates.js';
import { EMITTED_EVENT_NAME, wholeDayCounts } from '../events/public.js';

/**
 * Analytics reads only the rollup (`event_counts`, hourly, and `event_counts_daily`, kept by the
 * change feed's consumer and its fold, see rollup.ts): a 30-day series sums a few hundred rows
 * however many events the project has.
 */

type Counts = Record<AnalyticsMetric, number>;
const METRICS = Object.keys(ANALYTICS_METRICS) as AnalyticsMetric[];
const METRIC_EVENTS = Object.values(ANALYTICS_METRICS);

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;
const STEP_MS = { hour: HOUR_MS, day: DAY_MS } as const;
export const MAX_BUCKETS = 1000;

export interface RangeInput {
  from?: string;
  to?: string;
}

/** The range widened to whole buckets; `to` defaults to `now`, `from` to `to` minus `defaultSpanMs`. */
function bucketRange(input: RangeInput, now: Date, stepMs: number, defaultSpanMs: number) {
  const toGiven = input.to ? new Date(input.to).getTime() : now.getTime();
  const fromGiven = input.from ? new Date(input.from).getTime() : toGiven - defaultSpanMs;
  if (fromGiven >= toGiven) {
    throw validationFailed([{ field: 'from', message: 'must be before `to`', code: 'invalid_range' }]);
  }
  const from = Math.floor(fromGiven / stepMs) * stepMs;
  const to = Math.ceil(toGiven / stepMs) * stepMs;
  return { from: new Date(from), to: new Date(to), buckets: (to - from) / stepMs };
}

/** `sum(count) FILTER (name = …)` per metric, as numbers named after the metrics. */
const metricColumns = (): Sql =>
  join(
    METRICS.map((m) => sql`coalesce(sum(count) FILTER (WHERE name = ${ANALYTICS_METRICS[m]}), 0)::float8 AS ${raw(m)}`),
    ', ',
  );

const inRange = (projectId: string, from: Date, to: Date): Sql =>
  sql`project_id = ${projectId}::uuid AND hour >= ${from} AND hour < ${to}`;

const pickCounts = (row: Record<string, unknown>): Counts =>
  Object.fromEntries(METRICS.map((m) => [m, Number(row[m] ?? 0)])) as Counts;

async function ensureOwned(db: Queryable, table: 'campaigns' | 'templates', projectId: string, id: string) {
  const rows = await queryRows(
    db,
    sql`SELECT 1 FROM ${raw(table)} WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid`,
  );
  if (rows.length === 0) throw notFound(table === 'campaigns' ? 'Campaign' : 'Template');
}

export interface TimeseriesInput extends RangeInput {
  interval: AnalyticsInterval;
  campaignId?: string;
  templateId?: string;
}

/**
 * The metrics' counts of a series, as rows (bucket, name, count). A daily series of the whole
 * project reads the daily totals (`wholeDayCounts`: a row per day and name, not 24 × campaigns ×
 * templates); by hour, or for one campaign or template, the hourly rollup.
 */
function seriesCounts(projectId: string, input: TimeseriesInput, range: { from: Date; to: Date }): Sql {
  if (input.interval === 'day' && !input.campaignId && !input.templateId) {
    return sql`SELECT (day::timestamp AT TIME ZONE 'UTC') AS bucket, name, count
               FROM (${wholeDayCounts(projectId, range.from, range.to, METRIC_EVENTS)}) d`;
  }
  const filters = [inRange(projectId, range.from, range.to), sql`name = ANY(${METRIC_EVENTS}::text[])`];
  if (input.campaignId) filters.push(sql`campaign_id = ${input.campaignId}::uuid`);
  if (input.templateId) filters.push(sql`template_id = ${input.templateId}::uuid`);
  return sql`SELECT date_trunc(${input.interval}, hour, 'UTC') AS bucket, name, count FROM event_counts WHERE ${and(filters)}`;
}

/** Email metrics per bucket, every bucket of the range present (zeros included). */
export async function timeseries(db: Queryable, projectId: string, input: TimeseriesInput, now: Date) {
  const stepMs = STEP_MS[input.interval];
  const range = bucketRange(input, now, stepMs, input.interval === 'hour' ? DAY_MS : 30 * DAY_MS);
  if (range.buckets > MAX_BUCKETS) {
    throw validationFailed(
      [{ field: 'from', message: `at most ${MAX_BUCKETS} ${input.interval}s per series`, code: 'too_big' }],
      `The range holds ${range.buckets} ${input.interval}s; at most ${MAX_BUCKETS} per call`,
    );
  }
  if (input.campaignId) await ensureOwned(db, 'campaigns', projectId, input.campaignId);
  if (input.templateId) await ensureOwned(db, 'templates', projectId, input.templateId);
  const rows = await queryRows<Record<string, unknown> & { bucket: Date }>(
    db,
    sql`SELECT bucket, ${metricColumns()} FROM (${seriesCounts(projectId, input, range)}) c GROUP BY 1`,
  );
  const byBucket = new Map(rows.map((r) => [r.bucket.getTime(), pickCounts(r)]));
  const totals = pickCounts({});
  const points = [];
  for (let t = range.from.getTime(); t < range.to.getTime(); t += stepMs) {
    const counts = byBucket.get(t) ?? pickCounts({});
    for (const m of METRICS) totals[m] += counts[m];
    points.push({ timestamp: new Date(t).toISOString(), ...counts });
  }
  return {
    interval: input.interval,
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    campaignId: input.campaignId ?? null,
    templateId: input.templateId ?? null,
    totals,
    points,
  };
}

const hourRange = (input: RangeInput, now: Date) => bucketRange(input, now, HOUR_MS, 30 * DAY_MS);

/** Campaigns ranked by one metric over the range (campaigns with no email activity in it are left out). */
export async function topCampaigns(
  db: Queryable,
  projectId: string,
  input: RangeInput & { limit: number; sortBy: AnalyticsMetric },
  now: Date,
) {
  const range = hourRange(input, now);
  const rows = await queryRows<Record<string, unknown> & { id: string; name: string; status: CampaignStatus }>(
    db,
    sql`SELECT c.id, c.name, c.status, s.*
        FROM (SELECT campaign_id, ${metricColumns()} FROM event_counts
              WHERE ${inRange(projectId, range.from, range.to)} AND campaign_id IS NOT NULL
                AND name = ANY(${METRIC_EVENTS}::text[])
              GROUP BY campaign_id) s
        JOIN campaigns c ON c.id = s.campaign_id AND c.project_id = ${projectId}::uuid
        ORDER BY s.${raw(input.sortBy)} DESC, c.name, c.id LIMIT ${input.limit}`,
  );
  return {
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    data: rows.map((r) => {
      const counts = pickCounts(r);
      return { id: r.id, name: r.name, status: r.status, ...counts, rates: ratesOf(counts) };
    }),
  };
}

/** Totals and rates of all campaign email over the range. */
export async function campaignStatsSummary(db: Queryable, projectId: string, input: RangeInput, now: Date) {
  const range = hourRange(input, now);
  const [row] = await queryRows<Record<string, unknown> & { campaigns: number }>(
    db,
    sql`SELECT ${metricColumns()},
          count(DISTINCT campaign_id) FILTER (WHERE name = ${ANALYTICS_METRICS.sent})::int AS campaigns
        FROM event_counts
        WHERE ${inRange(projectId, range.from, range.to)} AND campaign_id IS NOT NULL
          AND name = ANY(${METRIC_EVENTS}::text[])`,
  );
  const counts = pickCounts(row ?? {});
  return {
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    campaigns: row?.campaigns ?? 0,
    ...counts,
    rates: ratesOf(counts),
  };
}

/** The most frequent event names over the range: tracked ones only, or all. */
export async function topEvents(
  db: Queryable,
  projectId: string,
  input: RangeInput & { limit: number; type: TopEventsType },
  now: Date,
) {
  const range = hourRange(input, now);
  const custom = input.type === 'custom' ? sql` AND NOT ${raw(EMITTED_EVENT_NAME)}` : sql``;
  const rows = await queryRows<{ name: string; count: number }>(
    db,
    sql`SELECT e.name, sum(e.count)::float8 AS count FROM event_counts e
        WHERE ${inRange(projectId, range.from, range.to)}${custom}
        GROUP BY e.name ORDER BY 2 DESC, 1 LIMIT ${input.limit}`,
  );
  return { from: range.from.toISOString(), to: range.to.toISOString(), data: rows };
}
