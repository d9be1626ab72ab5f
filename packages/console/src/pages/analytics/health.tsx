import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Link } from 'react-router';
import { account } from '../../api';
import { projectPath, useProject } from '../../session';
import { ConfirmDialog } from '../../ui/dialog';
import { ErrorNote, Loading, Notice, Time } from '../../ui/kit';

/** A rate with the precision its threshold needs (complaint thresholds are a tenth of a percent). */
const rateText = (rate: number, threshold: number) => `${(rate * 100).toFixed(threshold < 0.01 ? 3 : 2)}%`;

/**
 * Deliverability health: the rolling bounce and complaint rates against the thresholds that pause
 * campaigns; when paused, the campaigns held and (for an owner or admin) resuming them.
 */
export function HealthPanel() {
  const { project, canManage } = useProject();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const security = useQuery({
    queryKey: ['security', project.id],
    queryFn: () => account.projects.security(project.id),
  });
  const resume = useMutation({
    mutationFn: () => account.projects.resumeCampaigns(project.id),
    onSuccess: (state) => {
      queryClient.setQueryData(['security', project.id], state);
      queryClient.invalidateQueries({ queryKey: ['campaigns'] });
    },
    onSettled: () => setConfirming(false),
  });
  const s = security.data;
  const h = s?.health;
  return (
    <section className="card" aria-labelledby="health-title">
      <h2 id="health-title">Project health</h2>
      {security.isPending ? <Loading /> : null}
      <ErrorNote error={security.error ?? resume.error} />
      {s && h ? (
        <>
          <Gauge label="Bounce rate" rate={h.bounceRate} threshold={h.bounceThreshold} sample={h.sample} />
          <Gauge label="Complaint rate" rate={h.complaintRate} threshold={h.complaintThreshold} sample={h.sample} />
          <p className="muted">
            Over the last {h.sample.toLocaleString()} of at most {h.windowSize.toLocaleString()} messages; judged once
            there are {h.minimumSample.toLocaleString()}. In the last {s.windowDays} days:{' '}
            {s.emailsSent.toLocaleString()} sent, {s.bounces.toLocaleString()} bounced, {s.complaints.toLocaleString()}{' '}
            complaints.
          </p>
          {h.campaignsPaused ? (
            <Notice tone="warn">
              <strong>Campaigns are paused</strong> since <Time iso={h.pausedAt} />: {h.pausedReason ?? 'a threshold'}.
              Transactional mail keeps flowing; campaign mail waits.
              <HeldCampaigns />
              {canManage ? (
                <p>
                  <button type="button" onClick={() => setConfirming(true)}>
                    Resume campaigns…
                  </button>
                </p>
              ) : (
                <p>An owner or admin of the project can resume them.</p>
              )}
            </Notice>
          ) : (
            <p>
              <span className="chip ok">Campaigns sending</span>
            </p>
          )}
          {resume.isSuccess && !h.campaignsPaused ? <Notice tone="ok">Campaigns resumed.</Notice> : null}
        </>
      ) : null}
      <ConfirmDialog
        open={confirming}
        title="Resume campaigns?"
        confirm="Resume campaigns"
        busy={resume.isPending}
        onConfirm={() => resume.mutate()}
        onClose={() => setConfirming(false)}
      >
        <p>
          The held campaign mail goes out at once. If the addresses that bounced or complained are still in the
          audience, the rates rise again and campaigns pause again.
        </p>
      </ConfirmDialog>
    </section>
  );
}

function Gauge({ label, rate, threshold, sample }: { label: string; rate: number; threshold: number; sample: number }) {
  const id = useId();
  const over = rate > threshold;
  return (
    <div className="gauge">
      <label htmlFor={id}>{label}</label>
      <meter id={id} min={0} max={threshold * 2} low={threshold / 2} high={threshold} optimum={0} value={rate} />
      <span>
        <strong className={over ? 'error-text' : undefined}>{rateText(rate, threshold)}</strong>{' '}
        <span className="muted">
          of {sample.toLocaleString()}; campaigns pause above {rateText(threshold, threshold)}
        </span>
      </span>
    </div>
  );
}

/** The campaigns the pause holds: those sending. */
function HeldCampaigns() {
  const { project, api } = useProject();
  const sending = useQuery({
    queryKey: ['campaigns', project.id, { status: 'SENDING', pageSize: 20 }],
    queryFn: () => api.campaigns.list({ status: 'SENDING', pageSize: 20 }),
  });
  if (!sending.data || sending.data.data.length === 0) return null;
  return (
    <p>
      Held:{' '}
      {sending.data.data.map((c, i) => (
        <span key={c.id}>
          {i > 0 ? ', ' : ''}
          <Link to={projectPath(project.id, `campaigns/${c.id}`)}>{c.name}</Link>
        </span>
      ))}
      {sending.data.total > sending.data.data.length
        ? ` and ${sending.data.total - sending.data.data.length} more`
        : ''}
      .
    </p>
  );
}
