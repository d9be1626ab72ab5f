import type { AnalyticsMetric } from '@pigeon/sdk';
import { useMemo } from 'react';
import { useFilter } from '../../ui/pager';

export type Interval = 'hour' | 'day';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The ranges offered, as their length; hourly buckets only where they stay under the server's 1,000. */
export const RANGES: Array<[string, string, number]> = [
  ['24h', 'Last 24 hours', DAY],
  ['7d', 'Last 7 days', 7 * DAY],
  ['30d', 'Last 30 days', 30 * DAY],
  ['90d', 'Last 90 days', 90 * DAY],
  ['custom', 'Days I choose', 0],
];
const MAX_BUCKETS = 1000;

/** `YYYY-MM-DD` (a date input) as the start of that UTC day: analytics' days are UTC days. */
const utcDay = (day: string) => new Date(`${day}T00:00:00Z`);

export interface AnalyticsRange {
  from: string;
  to: string | undefined;
  interval: Interval;
  /** Hourly buckets would be more than the server answers for this range. */
  hourTooFine: boolean;
}

/**
 * The time range and granularity, kept in the URL (`?range=7d&interval=hour`, or
 * `?range=custom&from=…&until=…`) so a view of the numbers is a link. `from` is rounded down to
 * its bucket, so the same choice asks the same question (one cache entry) until the next bucket.
 */
export function useAnalyticsRange() {
  const [range, setRange] = useFilter('range');
  const [interval, setIntervalParam] = useFilter('interval');
  const [fromDay, setFromDay] = useFilter('from');
  const [untilDay, setUntilDay] = useFilter('until');
  const value = useMemo((): AnalyticsRange => {
    const preset = RANGES.find(([key]) => key === (range || '30d')) ?? RANGES[2];
    const now = Date.now();
    let from: Date;
    let to: Date | undefined;
    if (preset?.[0] === 'custom' && fromDay) {
      from = utcDay(fromDay);
      to = untilDay ? new Date(utcDay(untilDay).getTime() + DAY) : undefined;
    } else {
      from = new Date(now - (preset?.[2] || 30 * DAY));
    }
    const span = (to?.getTime() ?? now) - from.getTime();
    const hourTooFine = span / HOUR > MAX_BUCKETS;
    const chosen: Interval = interval === 'hour' && !hourTooFine ? 'hour' : 'day';
    const bucket = chosen === 'hour' ? HOUR : DAY;
    const rounded = new Date(Math.floor(from.getTime() / bucket) * bucket);
    return { from: rounded.toISOString(), to: to?.toISOString(), interval: chosen, hourTooFine };
  }, [range, interval, fromDay, untilDay]);
  return {
    value,
    range: range || '30d',
    setRange,
    setInterval: setIntervalParam,
    fromDay,
    setFromDay,
    untilDay,
    setUntilDay,
  };
}

/** A bucket's start as a short label: hours in the viewer's zone, days as the UTC days they are. */
export function bucketLabel(iso: string, interval: Interval): string {
  const date = new Date(iso);
  return interval === 'hour' ? HOUR_LABEL.format(date) : DAY_LABEL.format(date);
}
const HOUR_LABEL = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
});
const DAY_LABEL = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** The metrics in the server's order, with the words the console shows. */
export const METRIC_LABELS: Record<AnalyticsMetric, string> = {
  sent: 'Sent',
  delivered: 'Delivered',
  opened: 'Opened',
  clicked: 'Clicked',
  bounced: 'Bounced',
  complained: 'Complained',
  unsubscribed: 'Unsubscribed',
};
