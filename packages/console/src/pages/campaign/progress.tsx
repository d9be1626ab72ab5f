import type { Campaign, CampaignStats } from '@pigeon/sdk';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { projectPath, useProject } from '../../session';
import { ChartView } from '../../ui/chart';
import { ErrorNote, Progress } from '../../ui/kit';
import { isLive, LIVE_MS, mailLogPath, percent } from './format';

/** Queued, sent, failed and bounced as bars that move while the campaign sends. */
export function LiveProgress({ campaign, stats }: { campaign: Campaign; stats: CampaignStats | undefined }) {
  const { project, api } = useProject();
  const failed = useQuery({
    queryKey: ['campaign-failed', campaign.id],
    queryFn: () => api.emails.list({ campaignId: campaign.id, status: 'FAILED', limit: 1 }),
    refetchInterval: isLive(campaign) ? LIVE_MS : false,
  });
  const total = stats?.totalRecipients ?? campaign.totalRecipients;
  const link = (status?: string) => projectPath(project.id, mailLogPath(campaign.id, status));
  return (
    <section className="card" aria-labelledby="progress-title">
      <h2 id="progress-title">Progress</h2>
      <ErrorNote error={failed.error} />
      {/* Announced as it moves, but only the figures (not every bar's redraw). */}
      <div className="progress-list" aria-live="polite">
        <Progress label="Sent" value={stats?.sent ?? campaign.sentCount} max={total} />
        <Progress label="Queued" value={stats?.pending ?? 0} max={total} />
        <Progress label="Failed" value={failed.data?.total ?? 0} max={total} />
        <Progress label="Bounced" value={stats?.bounced ?? campaign.bouncedCount} max={total} />
      </div>
      <p className="muted">
        Rows behind these: <Link to={link()}>all {total.toLocaleString()}</Link> ·{' '}
        <Link to={link('QUEUED')}>queued</Link> · <Link to={link('FAILED')}>failed</Link> ·{' '}
        <Link to={link('BOUNCED')}>bounced</Link>
        {stats && stats.cancelled > 0 ? (
          <>
            {' '}
            · <Link to={link('CANCELLED')}>cancelled {stats.cancelled.toLocaleString()}</Link>
          </>
        ) : null}
      </p>
    </section>
  );
}

const METRICS: Array<{
  key: keyof CampaignStats;
  label: string;
  status?: string;
  rate?: keyof CampaignStats['rates'];
}> = [
  { key: 'sent', label: 'Sent' },
  { key: 'delivered', label: 'Delivered', status: 'DELIVERED', rate: 'delivery' },
  { key: 'opened', label: 'Opens', rate: 'open' },
  { key: 'clicked', label: 'Clicks', rate: 'click' },
  { key: 'bounced', label: 'Bounces', status: 'BOUNCED', rate: 'bounce' },
  { key: 'complained', label: 'Complaints', status: 'COMPLAINED', rate: 'complaint' },
  { key: 'unsubscribed', label: 'Unsubscribes', rate: 'unsubscribe' },
];

/**
 * Engagement as numbers and a chart. A number links to the mail log's rows where the log can
 * filter so (its statuses); opens, clicks and unsubscribes are moments, not statuses, so they do not.
 */
export function StatsPanel({ campaign, stats }: { campaign: Campaign; stats: CampaignStats }) {
  const { project } = useProject();
  return (
    <section className="card" aria-labelledby="stats-title">
      <h2 id="stats-title">Stats</h2>
      <dl className="stat-grid">
        {METRICS.map((m) => {
          const value = (stats[m.key] as number).toLocaleString();
          return (
            <div key={m.key} className="stat">
              <dt>{m.label}</dt>
              <dd>
                {m.key === 'sent' || m.status ? (
                  <Link
                    to={projectPath(project.id, mailLogPath(campaign.id, m.status))}
                    aria-label={`${m.label}: ${value}, show these emails`}
                  >
                    {value}
                  </Link>
                ) : (
                  value
                )}
                {m.rate ? <span className="muted"> {percent(stats.rates[m.rate])}</span> : null}
              </dd>
            </div>
          );
        })}
      </dl>
      <ChartView
        kind="bar"
        title={`Engagement of “${campaign.name}”`}
        labels={METRICS.map((m) => m.label)}
        series={[{ label: 'Recipients', data: METRICS.map((m) => stats[m.key] as number) }]}
        colorBars
      />
    </section>
  );
}
