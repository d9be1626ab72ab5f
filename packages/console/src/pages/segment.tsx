import { type ConditionTree, SEGMENT_TYPES, type Segment, type SegmentComputeResult } from '@pigeon/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { fieldErrors, isStatus } from '../api';
import { projectPath, useProject } from '../session';
import { ConditionBuilder, emptyCondition } from '../ui/condition-builder';
import { ConfirmDialog } from '../ui/dialog';
import { ErrorNote, Field, Form, Loading, Notice, PageHeader, StatusChip, Time } from '../ui/kit';
import { UsedBy } from '../ui/used-by';
import { LiveCount } from './segment/live-count';
import { Members } from './segment/members';

/** One segment (or a new one at `segments/new`): its condition with a live count, members, usage. */
export default function SegmentPage() {
  const { segmentId = 'new' } = useParams();
  const { project, api } = useProject();
  const segment = useQuery({
    queryKey: ['segment', project.id, segmentId],
    queryFn: () => api.segments.get(segmentId),
    enabled: segmentId !== 'new',
  });
  if (segmentId === 'new') return <SegmentForm key="new" />;
  if (segment.error) {
    return (
      <>
        <PageHeader title="Segment" />
        <ErrorNote error={segment.error} />
      </>
    );
  }
  if (!segment.data) return <Loading />;
  return (
    <>
      <SegmentForm key={segment.data.id} segment={segment.data} />
      <Members segment={segment.data} />
      <SegmentUsage segment={segment.data} />
    </>
  );
}

function SegmentForm({ segment }: { segment?: Segment }) {
  const { project, api } = useProject();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [name, setName] = useState(segment?.name ?? '');
  const [description, setDescription] = useState(segment?.description ?? '');
  const [type, setType] = useState<Segment['type']>(segment?.type ?? 'DYNAMIC');
  const [track, setTrack] = useState(segment?.trackMembership ?? false);
  const [condition, setCondition] = useState<ConditionTree>(segment?.condition ?? emptyCondition());
  const [deleting, setDeleting] = useState(false);
  const refresh = async (saved: Segment) => {
    queryClient.setQueryData(['segment', project.id, saved.id], saved);
    await queryClient.invalidateQueries({ queryKey: ['segments', project.id] });
    await queryClient.invalidateQueries({ queryKey: ['segment-members', project.id, saved.id] });
  };
  const dynamic = type === 'DYNAMIC';
  const save = useMutation({
    mutationFn: () =>
      segment
        ? api.segments.update(segment.id, {
            name,
            description: description || null,
            trackMembership: track,
            ...(dynamic ? { condition } : {}),
          })
        : api.segments.create({
            name,
            description: description || null,
            type,
            trackMembership: track,
            condition: dynamic ? condition : null,
          }),
    onSuccess: async (saved) => {
      await refresh(saved);
      if (!segment) navigate(projectPath(project.id, `segments/${saved.id}`), { replace: true });
    },
  });
  const recount = useMutation({
    mutationFn: async (how: 'refresh' | 'compute'): Promise<SegmentComputeResult | null> => {
      if (how === 'compute') return api.segments.compute(segment?.id ?? '');
      await api.segments.refresh(segment?.id ?? '');
      return null;
    },
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['segment', project.id, segment?.id] });
      await queryClient.invalidateQueries({ queryKey: ['segments', project.id] });
    },
  });
  const remove = useMutation({
    mutationFn: () => api.segments.delete(segment?.id ?? ''),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['segments', project.id] });
      navigate(projectPath(project.id, 'segments'));
    },
  });
  return (
    <>
      <PageHeader title={segment ? segment.name : 'New segment'}>
        {segment ? (
          <div className="actions">
            <StatusChip status={segment.type} />
            <button type="button" className="secondary" onClick={() => recount.mutate('refresh')}>
              Recount
            </button>
            {segment.trackMembership ? (
              <button type="button" className="secondary" onClick={() => recount.mutate('compute')}>
                Compute entries and exits
              </button>
            ) : null}
            <button type="button" className="danger" onClick={() => setDeleting(true)}>
              Delete
            </button>
          </div>
        ) : null}
      </PageHeader>
      {segment ? (
        <p className="muted">
          {segment.memberCount.toLocaleString()} members
          {segment.memberCountAt ? (
            <>
              , counted <Time iso={segment.memberCountAt} relative />
            </>
          ) : null}
          . Events: <code>segment.{segment.slug}.entry</code> / <code>.exit</code>
          {segment.trackMembership ? '' : ' (when tracked)'}.
        </p>
      ) : null}
      <ErrorNote error={recount.error} />
      {recount.data ? (
        <Notice tone="ok">
          {recount.data.entered} entered, {recount.data.exited} exited.
        </Notice>
      ) : null}
      <Form onSubmit={() => save.mutate()}>
        <ErrorNote error={save.error} />
        {save.isSuccess ? <Notice tone="ok">Saved.</Notice> : null}
        <section className="card" aria-labelledby="segment-details">
          <h2 id="segment-details">Details</h2>
          <div className="compose-grid">
            <Field
              label="Name"
              name="name"
              required
              value={name}
              error={save.error}
              onChange={(e) => setName(e.target.value)}
            />
            <Field
              label="Description"
              name="description"
              value={description}
              error={save.error}
              onChange={(e) => setDescription(e.target.value)}
            />
          </div>
          {segment ? null : (
            <fieldset>
              <legend>Type</legend>
              {SEGMENT_TYPES.map((t) => (
                <label key={t} className="choice">
                  <input type="radio" name="segment-type" checked={type === t} onChange={() => setType(t)} />
                  <span>
                    <strong>{t === 'DYNAMIC' ? 'Dynamic' : 'Static'}</strong>{' '}
                    <span className="muted">
                      {t === 'DYNAMIC'
                        ? 'contacts that match a condition, always current'
                        : 'contacts you add by email'}
                    </span>
                  </span>
                </label>
              ))}
            </fieldset>
          )}
          <label className="inline">
            <input type="checkbox" checked={track} onChange={(e) => setTrack(e.target.checked)} /> Track membership
            (record an entry and an exit event as contacts join and leave; workflows can start on them)
          </label>
        </section>
        {dynamic ? (
          <section className="card" aria-labelledby="segment-condition">
            <h2 id="segment-condition">Who is in it</h2>
            <ConditionBuilder
              label="Condition"
              value={condition}
              onChange={setCondition}
              errors={fieldErrors(save.error)}
            />
            <LiveCount condition={condition} />
          </section>
        ) : null}
        <div className="form-end">
          <button type="submit" className="primary" disabled={save.isPending}>
            {segment ? 'Save segment' : 'Create segment'}
          </button>
        </div>
      </Form>
      {segment ? (
        <ConfirmDialog
          open={deleting}
          title={`Delete ${segment.name}?`}
          confirm="Delete segment"
          onConfirm={() => remove.mutate()}
          onClose={() => {
            setDeleting(false);
            remove.reset();
          }}
        >
          <p>The segment and its membership records are gone for good; its contacts stay.</p>
          {isStatus(remove.error, 409) ? (
            <Notice tone="warn">{`${(remove.error as Error).message}. Change what uses it first (listed under "Used by").`}</Notice>
          ) : (
            <ErrorNote error={remove.error} />
          )}
        </ConfirmDialog>
      ) : null}
    </>
  );
}

/** Campaigns, workflows and segments that reference this one. */
function SegmentUsage({ segment }: { segment: Segment }) {
  const { project, api } = useProject();
  const usage = useQuery({
    queryKey: ['segment-usage', project.id, segment.id],
    queryFn: () => api.segments.usage(segment.id),
  });
  const links = usage.data && [
    ...usage.data.campaigns.map((c) => ({ ...c, kind: 'Campaign', path: `campaigns/${c.id}` })),
    ...usage.data.workflows.map((w) => ({ ...w, kind: 'Workflow', path: `workflows/${w.id}` })),
    ...usage.data.segments.map((s) => ({ ...s, kind: 'Segment', path: `segments/${s.id}` })),
  ];
  return <UsedBy links={links} error={usage.error} none="No campaign, workflow or segment uses it." />;
}
