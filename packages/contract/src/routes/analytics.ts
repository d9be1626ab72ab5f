import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, Timestamp } from '../common.js';
import { meta } from '../meta.js';
import { CampaignStatus } from './campaigns.js';

const c = initContract();
const dashboard = meta({ auth: 'dashboard', permission: 'project.use' });

/** The email metrics, in the order they are reported; each counts the events of one name. */
export const ANALYTICS_METRICS = {
  sent: 'email.sent',
  delivered: 'email.delivery',
  opened: 'email.open',
  clicked: 'email.click',
  bounced: 'email.bounce',
  complained: 'email.complaint',
  unsubscribed: 'contact.unsubscribed',
} as const;
export type AnalyticsMetric = keyof typeof ANALYTICS_METRICS;
export const AnalyticsMetric = z.enum([
  'sent',
  'delivered',
  'opened',
  'clicked',
  'bounced',
  'complained',
  'unsubscribed',
] as const satisfies ReadonlyArray<AnalyticsMetric>);

const count = z.number().int().min(0);
const metricCountsObject = z
  .object({
    sent: count,
    delivered: count,
    opened: count,
    clicked: count,
    bounced: count,
    complained: count,
    unsubscribed: count,
  })
  .describe(
    'Events counted: sent `email.sent`, delivered `email.delivery`, opened `email.open`, clicked `email.click`, bounced `email.bounce`, complained `email.complaint`, unsubscribed `contact.unsubscribed`',
  );
type MetricCountsObject = typeof metricCountsObject;
/** Named so declaration files refer to it rather than spell it out per route (as the others below). */
export interface MetricCountsSchema extends MetricCountsObject {}
export const MetricCounts: MetricCountsSchema = metricCountsObject;

const metricRatesObject = z
  .object({
    delivery: z.number(),
    open: z.number(),
    click: z.number(),
    bounce: z.number(),
    complaint: z.number(),
    unsubscribe: z.number(),
  })
  .describe('Fractions 0..1 of `sent` (0 when nothing was sent)');
type MetricRatesObject = typeof metricRatesObject;
export interface MetricRatesSchema extends MetricRatesObject {}
export const MetricRates: MetricRatesSchema = metricRatesObject;

export const AnalyticsInterval = z.enum(['hour', 'day']);
export type AnalyticsInterval = z.infer<typeof AnalyticsInterval>;

/** Optional range; bounds are widened to whole buckets (hours, or UTC days). */
const analyticsRangeObject = z.object({
  from: z
    .string()
    .datetime({ offset: true })
    .optional()
    .describe('Inclusive lower bound (ISO 8601); default `to` minus 30 days (24 hours for hourly series)'),
  to: z.string().datetime({ offset: true }).optional().describe('Exclusive upper bound (ISO 8601); default now'),
});
type AnalyticsRangeObject = typeof analyticsRangeObject;
export interface AnalyticsRangeSchema extends AnalyticsRangeObject {}
export const AnalyticsRange: AnalyticsRangeSchema = analyticsRangeObject;

const limit = z.coerce.number().int().min(1).max(100).default(10).describe('1 to 100, default 10');

const timeseriesQueryObject = AnalyticsRange.extend({
  interval: AnalyticsInterval.default('day').describe('`hour` or `day` (UTC days), default `day`'),
  campaignId: z.string().uuid().optional().describe('Only email of this campaign'),
  templateId: z.string().uuid().optional().describe('Only email sent from this template'),
});
type TimeseriesQueryObject = typeof timeseriesQueryObject;
export interface TimeseriesQuerySchema extends TimeseriesQueryObject {}
export const TimeseriesQuery: TimeseriesQuerySchema = timeseriesQueryObject;

const timeseriesObject = z.object({
  interval: AnalyticsInterval,
  from: Timestamp.describe('Start of the first bucket'),
  to: Timestamp.describe('End of the last bucket'),
  campaignId: z.string().uuid().nullable(),
  templateId: z.string().uuid().nullable(),
  totals: MetricCounts,
  points: z.array(MetricCounts.extend({ timestamp: Timestamp.describe('Start of the bucket') })),
});
type TimeseriesObject = typeof timeseriesObject;
export interface TimeseriesSchema extends TimeseriesObject {}
export const Timeseries: TimeseriesSchema = timeseriesObject;

const topCampaignsQueryObject = AnalyticsRange.extend({
  limit,
  sortBy: AnalyticsMetric.default('sent').describe('Metric to rank by, default `sent`'),
});
type TopCampaignsQueryObject = typeof topCampaignsQueryObject;
export interface TopCampaignsQuerySchema extends TopCampaignsQueryObject {}
export const TopCampaignsQuery: TopCampaignsQuerySchema = topCampaignsQueryObject;

const campaignActivityObject = MetricCounts.extend({
  id: z.string().uuid(),
  name: z.string(),
  status: CampaignStatus,
  rates: MetricRates,
});
type CampaignActivityObject = typeof campaignActivityObject;
export interface CampaignActivitySchema extends CampaignActivityObject {}
export const CampaignActivity: CampaignActivitySchema = campaignActivityObject;

const topCampaignsObject = z.object({ from: Timestamp, to: Timestamp, data: z.array(CampaignActivity) });
type TopCampaignsObject = typeof topCampaignsObject;
export interface TopCampaignsSchema extends TopCampaignsObject {}
export const TopCampaigns: TopCampaignsSchema = topCampaignsObject;

const campaignStatsSummaryObject = MetricCounts.extend({
  from: Timestamp,
  to: Timestamp,
  campaigns: count.describe('Campaigns that sent email in the range'),
  rates: MetricRates,
});
type CampaignStatsSummaryObject = typeof campaignStatsSummaryObject;
export interface CampaignStatsSummarySchema extends CampaignStatsSummaryObject {}
export const CampaignStatsSummary: CampaignStatsSummarySchema = campaignStatsSummaryObject;

/** Which event names top-events ranks: tracked ones only, or with the ones Pigeon records itself. */
export const TopEventsType = z.enum(['custom', 'all']);
export type TopEventsType = z.infer<typeof TopEventsType>;

const topEventsQueryObject = AnalyticsRange.extend({
  limit,
  type: TopEventsType.default('custom').describe(
    '`custom` (default): tracked events only; `all`: with the ones Pigeon records itself',
  ),
});
type TopEventsQueryObject = typeof topEventsQueryObject;
export interface TopEventsQuerySchema extends TopEventsQueryObject {}
export const TopEventsQuery: TopEventsQuerySchema = topEventsQueryObject;

const topEventsObject = z.object({
  from: Timestamp,
  to: Timestamp,
  data: z.array(z.object({ name: z.string(), count })),
});
type TopEventsObject = typeof topEventsObject;
export interface TopEventsSchema extends TopEventsObject {}
export const TopEvents: TopEventsSchema = topEventsObject;

export const analyticsContract = c.router(
  {
    timeseries: {
      method: 'GET',
      path: '/analytics/timeseries',
      summary: 'Email metrics per hour or UTC day over a range, optionally of one campaign or template',
      description: 'From hourly counts a few seconds behind the events; at most 1,000 buckets.',
      metadata: dashboard,
      query: TimeseriesQuery,
      responses: { 200: Timeseries, 404: ErrorEnvelope, ...commonErrors },
    },
    topCampaigns: {
      method: 'GET',
      path: '/analytics/top-campaigns',
      summary: 'Campaigns ranked by a metric over a range',
      metadata: dashboard,
      query: TopCampaignsQuery,
      responses: { 200: TopCampaigns, ...commonErrors },
    },
    campaignStats: {
      method: 'GET',
      path: '/analytics/campaign-stats',
      summary: 'Totals and rates of all campaign email over a range',
      metadata: dashboard,
      query: AnalyticsRange,
      responses: { 200: CampaignStatsSummary, ...commonErrors },
    },
    topEvents: {
      method: 'GET',
      path: '/analytics/top-events',
      summary: 'The most frequent event names over a range',
      metadata: dashboard,
      query: TopEventsQuery,
      responses: { 200: TopEvents, ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

export const analyticsSchemas = { Timeseries, TopCampaigns, CampaignStatsSummary, TopEvents };
