import type { AnalyticsMetric } from '@pigeon/sdk';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { projectPath, useProject } from '../../session';
import { ChartView } from '../../ui/chart';
import { ErrorNote, Loading, SelectField } from '../../ui/kit';
import { useFilter } from '../../ui/pager';
import { percent } from '../campaign/format';
import { type AnalyticsRange, bucketLabel, METRIC_LABELS } from './range';

const METRICS = Object.keys(METRIC_LABELS) as AnalyticsMetric[];
const metricOptions = METRICS.map((m): [string, string] => [m, METRIC_LABELS[m]]);

/** Every metric per bucket of the range, with the range's totals. */
export function SeriesPanel({ range }: { range: AnalyticsRange }) {
  const { project, api } = useProject();
  const query = { from: range.from, to: range.to, interval: range.interval };
  const series = useQuery({
    queryKey: ['analytics', project.id, 'timeseries', query],
    queryFn: () => api.analytics.timeseries(query),
    placeholderData: keepPreviousData,
  });
  return (
    <section className="card" aria-labelledby="series-title">
      <h2 id="series-title">Email over time</h2>
      <ErrorNote error={series.error} />
      {series.isPending ? <Loading /> : null}
      {series.data ? (
        <>
          <dl className="stat-grid">
            {METRICS.map((m) => (
              <div key={m} className="stat">
                <dt>{METRIC_LABELS[m]}</dt>
                <dd>{series.data.totals[m].toLocaleString()}</dd>
              </div>
            ))}
          </dl>
          <ChartView
            kind="line"
            title={`Email per ${series.data.interval === 'hour' ? 'hour' : 'day (UTC)'}`}
            labels={series.data.points.map((p) => bucketLabel(p.timestamp, series.data.interval))}
            series={METRICS.map((m) => ({ label: METRIC_LABELS[m], data: series.data.points.map((p) => p[m]) }))}
          />
        </>
      ) : null}
    </section>
  );
}

/** Totals and rates of every campaign's email in the range. */
export function CampaignStatsPanel({ range }: { range: AnalyticsRange }) {
  const { project, api } = useProject();
  const query = { from: range.from, to: range.to };
  const stats = useQuery({
    queryKey: ['analytics', project.id, 'campaign-stats', query],
    queryFn: () => api.analytics.campaignStats(query),
    placeholderData: keepPreviousData,
  });
  const s = stats.data;
  return (
    <section className="card" aria-labelledby="campaign-stats-title">
      <h2 id="campaign-stats-title">Campaigns together</h2>
      <ErrorNote error={stats.error} />
      {s ? (
        <>
          <p className="muted">
            {s.campaigns.toLocaleString()} campaign{s.campaigns === 1 ? '' : 's'} sent email in the range: delivery{' '}
            {percent(s.rates.delivery)}, opens {percent(s.rates.open)}, clicks {percent(s.rates.click)}, bounces{' '}
            {percent(s.rates.bounce)}, complaints {percent(s.rates.complaint)}, unsubscribes{' '}
            {percent(s.rates.unsubscribe)}.
          </p>
          <ChartView
            kind="bar"
            title="Campaign email in the range"
            labels={METRICS.map((m) => METRIC_LABELS[m])}
            series={[{ label: 'Emails', data: METRICS.map((m) => s[m]) }]}
            colorBars
          />
        </>
      ) : null}
    </section>
  );
}

/** The campaigns that did most of a metric, each linking to its page. */
export function TopCampaignsPanel({ range }: { range: AnalyticsRange }) {
  const { project, api } = useProject();
  const [sortBy, setSortBy] = useFilter('rank');
  const metric = (METRICS.includes(sortBy as AnalyticsMetric) ? sortBy : 'sent') as AnalyticsMetric;
  const query = { from: range.from, to: range.to, sortBy: metric, limit: 10 };
  const top = useQuery({
    queryKey: ['analytics', project.id, 'top-campaigns', query],
    queryFn: () => api.analytics.topCampaigns(query),
    placeholderData: keepPreviousData,
  });
  return (
    <section className="card" aria-labelledby="top-campaigns-title">
      <div className="card-header">
        <h2 id="top-campaigns-title">Top campaigns</h2>
        <div className="actions">
          <SelectField
            label="Ranked by"
            value={metric}
            onChange={(e) => setSortBy(e.target.value)}
            options={metricOptions}
          />
        </div>
      </div>
      <ErrorNote error={top.error} />
      {top.data?.data.length === 0 ? <p className="muted">No campaign sent email in this range.</p> : null}
      {top.data && top.data.data.length > 0 ? (
        <>
          <ChartView
            kind="bar"
            horizontal
            title={`Campaigns by ${METRIC_LABELS[metric].toLowerCase()}`}
            labels={top.data.data.map((c) => c.name)}
            series={[{ label: METRIC_LABELS[metric], data: top.data.data.map((c) => c[metric]) }]}
            colors={[METRICS.indexOf(metric)]}
          />
          <ol className="plain-list">
            {top.data.data.map((c) => (
              <li key={c.id}>
                <Link to={projectPath(project.id, `campaigns/${c.id}`)}>{c.name}</Link>{' '}
                <span className="muted">
                  {c[metric].toLocaleString()} {METRIC_LABELS[metric].toLowerCase()} · opens {percent(c.rates.open)} ·
                  clicks {percent(c.rates.click)}
                </span>
              </li>
            ))}
          </ol>
        </>
      ) : null}
    </section>
  );
}

/** The most frequent event names: tracked ones, or with the ones Pigeon records itself. */
export function TopEventsPanel({ range }: { range: AnalyticsRange }) {
  const { project, api } = useProject();
  const [type, setType] = useFilter('events');
  const kind = type === 'all' ? 'all' : 'custom';
  const query = { from: range.from, to: range.to, type: kind, limit: 10 } as const;
  const top = useQuery({
    queryKey: ['analytics', project.id, 'top-events', query],
    queryFn: () => api.analytics.topEvents(query),
    placeholderData: keepPreviousData,
  });
  return (
    <section className="card" aria-labelledby="top-events-title">
      <div className="card-header">
        <h2 id="top-events-title">Top events</h2>
        <div className="actions">
          <SelectField
            label="Events"
            value={kind}
            onChange={(e) => setType(e.target.value === 'all' ? 'all' : '')}
            options={[
              ['custom', 'Tracked by you'],
              ['all', "With Pigeon's own"],
            ]}
          />
        </div>
      </div>
      <ErrorNote error={top.error} />
      {top.data?.data.length === 0 ? (
        <p className="muted">
          No event in this range. Track one from your backend (<code>pigeon.events.track(…)</code>); see{' '}
          <Link to={projectPath(project.id, 'events')}>Events</Link>.
        </p>
      ) : null}
      {top.data && top.data.data.length > 0 ? (
        <ChartView
          kind="bar"
          horizontal
          title="Events by count"
          labels={top.data.data.map((e) => e.name)}
          series={[{ label: 'Count', data: top.data.data.map((e) => e.count) }]}
          colors={[3]}
        />
      ) : null}
    </section>
  );
}
