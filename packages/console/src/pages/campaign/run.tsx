import type { Campaign } from '@pigeon/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { account } from '../../api';
import { projectPath, useProject } from '../../session';
import { ConfirmDialog } from '../../ui/dialog';
import { ErrorNote, Notice, PageHeader, StatusChip, Time } from '../../ui/kit';
import { MessageFrame } from '../../ui/message-frame';
import { useCampaignActions } from './actions';
import { senderOf } from './compose';
import { isLive, LIVE_MS, viewerZone } from './format';
import { LiveProgress, StatsPanel } from './progress';
import { SendOrSchedule } from './send';

const AUDIENCE_TEXT: Record<Campaign['audienceType'], string> = {
  ALL: 'Every contact',
  SEGMENT: 'A segment',
  FILTERED: 'Contacts matching conditions',
};

/** A campaign past its draft: scheduled, sending (live), sent or cancelled; its stats; cancel, duplicate, delete. */
export function RunView({ campaign }: { campaign: Campaign }) {
  const { project, api } = useProject();
  const queryClient = useQueryClient();
  const [confirm, setConfirm] = useState<'cancel' | 'delete' | null>(null);
  const live = isLive(campaign);
  const stats = useQuery({
    queryKey: ['campaign-stats', campaign.id],
    queryFn: () => api.campaigns.stats(campaign.id),
    refetchInterval: live ? LIVE_MS : false,
  });
  const audience = useQuery({
    queryKey: ['audience-count', project.id, campaign.id],
    queryFn: () =>
      api.campaigns.audienceCount({
        type: campaign.type,
        audienceType: campaign.audienceType,
        segmentId: campaign.segmentId,
        audienceCondition: campaign.audienceCondition,
      }),
    enabled: campaign.status === 'SCHEDULED',
  });
  const security = useQuery({
    queryKey: ['security', project.id],
    queryFn: () => account.projects.security(project.id),
    enabled: live,
  });
  const refresh = () => {
    queryClient.invalidateQueries({ queryKey: ['campaign', campaign.id] });
    queryClient.invalidateQueries({ queryKey: ['campaign-stats', campaign.id] });
    queryClient.invalidateQueries({ queryKey: ['campaigns'] });
  };
  const cancel = useMutation({
    mutationFn: () => api.campaigns.cancel(campaign.id),
    onSuccess: refresh,
    onSettled: () => setConfirm(null),
  });
  const { duplicate, remove } = useCampaignActions(campaign, () => setConfirm(null));
  const pending = stats.data?.pending ?? 0;
  return (
    <>
      <PageHeader title={campaign.name}>
        <StatusChip status={campaign.status} />
        <button type="button" onClick={() => duplicate.mutate()} disabled={duplicate.isPending}>
          Duplicate
        </button>
        {live ? (
          <button type="button" className="danger" onClick={() => setConfirm('cancel')}>
            Cancel campaign
          </button>
        ) : null}
        {campaign.status !== 'SENDING' ? (
          <button type="button" className="danger" onClick={() => setConfirm('delete')}>
            Delete
          </button>
        ) : null}
      </PageHeader>
      <ErrorNote error={cancel.error ?? duplicate.error ?? remove.error ?? stats.error} />
      {cancel.data ? <Notice tone="ok">{cancel.data.message}</Notice> : null}
      {live && security.data?.health.campaignsPaused ? (
        <Notice tone="warn">
          Campaign sending is paused for this project: {security.data.health.pausedReason ?? 'deliverability'}. Its mail
          waits until the pause is lifted on <Link to={projectPath(project.id, 'analytics')}>Analytics</Link>.
        </Notice>
      ) : null}
      <dl className="facts">
        <dt>Subject</dt>
        <dd>{campaign.subject}</dd>
        <dt>From</dt>
        <dd>{senderOf(campaign)}</dd>
        <dt>Audience</dt>
        <dd>
          {AUDIENCE_TEXT[campaign.audienceType]},{' '}
          {campaign.status === 'SCHEDULED'
            ? `${audience.data ? audience.data.count.toLocaleString() : '…'} recipients if it were now (fixed when sending starts)`
            : `${campaign.totalRecipients.toLocaleString()} recipients`}
        </dd>
        {campaign.scheduledFor ? (
          <>
            <dt>Scheduled for</dt>
            <dd>
              <Time iso={campaign.scheduledFor} /> <span className="muted">({viewerZone()})</span>
            </dd>
          </>
        ) : null}
        {campaign.sentAt ? (
          <>
            <dt>Finished</dt>
            <dd>
              <Time iso={campaign.sentAt} />
            </dd>
          </>
        ) : null}
        {campaign.cancelledAt ? (
          <>
            <dt>Cancelled</dt>
            <dd>
              <Time iso={campaign.cancelledAt} />
            </dd>
          </>
        ) : null}
      </dl>
      {campaign.status === 'SCHEDULED' ? (
        <>
          <Notice>
            Waiting until <Time iso={campaign.scheduledFor} />: this page follows it when sending starts.
          </Notice>
          <SendOrSchedule campaign={campaign} save={async () => campaign} title="Another time, or now" />
        </>
      ) : (
        <LiveProgress campaign={campaign} stats={stats.data} />
      )}
      {stats.data && campaign.status !== 'SCHEDULED' ? <StatsPanel campaign={campaign} stats={stats.data} /> : null}
      <details className="card">
        <summary>The message</summary>
        <MessageFrame html={campaign.body} title={`Body of ${campaign.name}`} />
      </details>
      <ConfirmDialog
        open={confirm === 'cancel'}
        title="Cancel this campaign?"
        confirm="Cancel the campaign"
        busy={cancel.isPending}
        onConfirm={() => cancel.mutate()}
        onClose={() => setConfirm(null)}
      >
        <p>
          {campaign.status === 'SCHEDULED'
            ? 'Nothing has been sent yet, and nothing will be.'
            : `The ${pending.toLocaleString()} messages still queued are never sent; the ones already sent stay sent.`}{' '}
          A cancelled campaign cannot be restarted (duplicate it to send again).
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={confirm === 'delete'}
        title="Delete this campaign?"
        confirm="Delete the campaign"
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onClose={() => setConfirm(null)}
      >
        <p>“{campaign.name}”, its content and its stats are deleted. The emails it sent stay in the mail log.</p>
      </ConfirmDialog>
    </>
  );
}
