import { contract } from './contract.js';
import type { RequestOptions, Transport } from './transport.js';
import type {
  AnalyticsRangeQuery,
  CampaignStatsSummary,
  TimeBound,
  Timeseries,
  TimeseriesQuery,
  TopCampaigns,
  TopCampaignsQuery,
  TopEvents,
  TopEventsQuery,
} from './types.js';

/** `from` and `to` as the ISO strings the server parses (a Date becomes its ISO string). */
function bounds<Q extends { from?: TimeBound; to?: TimeBound }>(query: Q) {
  const iso = (v: TimeBound | undefined, name: string) => {
    if (!(v instanceof Date)) return v;
    if (Number.isNaN(v.getTime())) throw new TypeError(`Invalid \`${name}\`: the Date is invalid`);
    return v.toISOString();
  };
  return { ...query, from: iso(query.from, 'from'), to: iso(query.to, 'to') };
}

/**
 * Analytics of the key's project (secret key), as `pigeon.analytics`: email metrics over time, the
 * campaigns and events that did most. Read from hourly counts the server keeps a few seconds
 * behind the events. Ranges default to the last 30 days and widen to whole buckets.
 */
export class Analytics {
  constructor(private readonly transport: Transport) {}

  /** Sent, delivered, opened, clicked, bounced, complained and unsubscribed per `hour` or UTC `day`. */
  readonly timeseries = async (query: TimeseriesQuery = {}, options?: RequestOptions): Promise<Timeseries> =>
    this.transport.call(contract.analytics.timeseries, { query: bounds(query) }, options);

  /** Campaigns ranked by `sortBy` (default `sent`) over the range, with their counts and rates. */
  readonly topCampaigns = async (query: TopCampaignsQuery = {}, options?: RequestOptions): Promise<TopCampaigns> =>
    this.transport.call(contract.analytics.topCampaigns, { query: bounds(query) }, options);

  /** Totals and rates over every campaign's email in the range. */
  readonly campaignStats = async (
    query: AnalyticsRangeQuery = {},
    options?: RequestOptions,
  ): Promise<CampaignStatsSummary> =>
    this.transport.call(contract.analytics.campaignStats, { query: bounds(query) }, options);

  /** The most frequent event names: tracked ones (default), or `type: 'all'` with Pigeon's own. */
  readonly topEvents = async (query: TopEventsQuery = {}, options?: RequestOptions): Promise<TopEvents> =>
    this.transport.call(contract.analytics.topEvents, { query: bounds(query) }, options);
}
