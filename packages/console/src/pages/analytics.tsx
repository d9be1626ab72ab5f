import { PageHeader, SelectField } from '../ui/kit';
import { HealthPanel } from './analytics/health';
import { CampaignStatsPanel, SeriesPanel, TopCampaignsPanel, TopEventsPanel } from './analytics/panels';
import { RANGES, useAnalyticsRange } from './analytics/range';

/** Email metrics over a time range (per hour or UTC day), top campaigns and events, and project health. */
export default function AnalyticsPage() {
  const r = useAnalyticsRange();
  return (
    <>
      <PageHeader title="Analytics" />
      <HealthPanel />
      <div className="filters">
        <SelectField
          label="Range"
          value={r.range}
          onChange={(e) => r.setRange(e.target.value === '30d' ? '' : e.target.value)}
          options={RANGES.map(([key, label]): [string, string] => [key, label])}
        />
        {r.range === 'custom' ? (
          <>
            <div className="field">
              <label htmlFor="analytics-from">From (UTC day)</label>
              <input
                id="analytics-from"
                type="date"
                required
                value={r.fromDay}
                onChange={(e) => r.setFromDay(e.target.value)}
              />
            </div>
            <div className="field">
              <label htmlFor="analytics-until">Until (UTC day, empty: today)</label>
              <input
                id="analytics-until"
                type="date"
                value={r.untilDay}
                onChange={(e) => r.setUntilDay(e.target.value)}
              />
            </div>
          </>
        ) : null}
        <SelectField
          label="Per"
          value={r.value.interval}
          onChange={(e) => r.setInterval(e.target.value === 'hour' ? 'hour' : '')}
          options={[['day', 'Day (UTC)'], ...(r.value.hourTooFine ? [] : [['hour', 'Hour'] as [string, string]])]}
        />
      </div>
      <SeriesPanel range={r.value} />
      <div className="analytics-grid">
        <TopCampaignsPanel range={r.value} />
        <TopEventsPanel range={r.value} />
      </div>
      <CampaignStatsPanel range={r.value} />
    </>
  );
}
