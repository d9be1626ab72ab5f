import type { Campaign } from '@pigeon/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { projectPath, useProject } from '../session';
import { ConfirmDialog } from '../ui/dialog';
import { ErrorNote, Form, Loading, PageHeader } from '../ui/kit';
import { useCampaignActions } from './campaign/actions';
import { ComposeFields } from './campaign/compose';
import { isLive, LIVE_MS } from './campaign/format';
import { RunView } from './campaign/run';
import { SendPanel } from './campaign/send';
import { blankValues, type ComposeValues, fromTemplate, inputOf, valuesOf } from './campaign/values';

/** One campaign: compose a DRAFT (`campaigns/new` for a new one), then its live progress and stats. */
export default function CampaignPage() {
  const { campaignId = '' } = useParams();
  return campaignId === 'new' ? <NewCampaign /> : <ExistingCampaign key={campaignId} id={campaignId} />;
}

const BackLink = () => {
  const { project } = useProject();
  return (
    <p>
      <Link to={projectPath(project.id, 'campaigns')}>← Campaigns</Link>
    </p>
  );
};

/** `?template=<id>` starts from that template (the templates page links here so). */
function NewCampaign() {
  const { project, api } = useProject();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [params] = useSearchParams();
  const templateId = params.get('template');
  const [values, setValues] = useState(() => blankValues(project.defaultFrom));
  const template = useQuery({
    queryKey: ['template', templateId],
    queryFn: () => api.templates.get(templateId ?? ''),
    enabled: Boolean(templateId),
  });
  useEffect(() => {
    if (template.data) setValues((v) => (v.templateId ? v : fromTemplate(v, template.data)));
  }, [template.data]);
  const create = useMutation({
    mutationFn: () => api.campaigns.create(inputOf(values)),
    onSuccess: (campaign) => {
      queryClient.setQueryData(['campaign', campaign.id], campaign);
      queryClient.invalidateQueries({ queryKey: ['campaigns'] });
      navigate(projectPath(project.id, `campaigns/${campaign.id}`), { replace: true });
    },
  });
  return (
    <>
      <BackLink />
      <PageHeader title="New campaign" />
      <Form aria-label="New campaign" onSubmit={() => create.mutate()}>
        <ComposeFields
          values={values}
          onChange={(next) => setValues((v) => ({ ...v, ...next }))}
          error={create.error}
        />
        <ErrorNote error={create.error ?? template.error} />
        <div className="actions form-end">
          <button type="submit" className="primary" disabled={create.isPending}>
            Save draft
          </button>
          <span className="muted">Then send a test, and send it now or at a time.</span>
        </div>
      </Form>
    </>
  );
}

function ExistingCampaign({ id }: { id: string }) {
  const { api } = useProject();
  const campaign = useQuery({
    queryKey: ['campaign', id],
    queryFn: () => api.campaigns.get(id),
    refetchInterval: (q) => (isLive(q.state.data) ? LIVE_MS : false),
  });
  if (campaign.isPending) return <Loading />;
  if (campaign.error)
    return (
      <>
        <BackLink />
        <ErrorNote error={campaign.error} />
      </>
    );
  return (
    <>
      <BackLink />
      {campaign.data.status === 'DRAFT' ? (
        <DraftEditor campaign={campaign.data} />
      ) : (
        <RunView campaign={campaign.data} />
      )}
    </>
  );
}

/** A DRAFT: its form, saved on demand, and the test and send steps (which save first). */
function DraftEditor({ campaign }: { campaign: Campaign }) {
  const { api } = useProject();
  const queryClient = useQueryClient();
  const [saved, setSaved] = useState(() => valuesOf(campaign));
  const [values, setValues] = useState<ComposeValues>(saved);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const dirty = JSON.stringify(values) !== JSON.stringify(saved);
  const replace = useMutation({
    mutationFn: (v: ComposeValues) => api.campaigns.replace(campaign.id, inputOf(v)),
    onSuccess: (updated, v) => {
      setSaved(v);
      queryClient.setQueryData(['campaign', campaign.id], updated);
      queryClient.invalidateQueries({ queryKey: ['campaigns'] });
    },
  });
  const save = async () => (dirty ? replace.mutateAsync(values) : campaign);
  const { duplicate, remove } = useCampaignActions(campaign);
  return (
    <>
      <PageHeader title={saved.name || 'Untitled campaign'}>
        <span className="chip plain">DRAFT</span>
        <button type="button" onClick={() => duplicate.mutate()} disabled={duplicate.isPending}>
          Duplicate
        </button>
        <button type="button" className="danger" onClick={() => setConfirmDelete(true)}>
          Delete
        </button>
      </PageHeader>
      <ErrorNote error={duplicate.error ?? remove.error} />
      <Form aria-label="Campaign draft" onSubmit={() => replace.mutate(values)}>
        <ComposeFields
          values={values}
          onChange={(next) => setValues((v) => ({ ...v, ...next }))}
          error={replace.error}
        />
        <ErrorNote error={replace.error} />
        <div className="actions form-end">
          <button type="submit" className="primary" disabled={replace.isPending || !dirty}>
            Save draft
          </button>
          <span className="muted" aria-live="polite">
            {dirty ? 'Unsaved changes (a test or a send saves them first)' : 'Saved'}
          </span>
        </div>
      </Form>
      <SendPanel campaign={campaign} save={save} />
      <ConfirmDialog
        open={confirmDelete}
        title="Delete this draft?"
        confirm="Delete the draft"
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onClose={() => setConfirmDelete(false)}
      >
        <p>“{saved.name}”, its message and its audience are deleted. Nothing was sent from it.</p>
      </ConfirmDialog>
    </>
  );
}
