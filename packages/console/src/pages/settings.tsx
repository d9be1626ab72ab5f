import { BILLING_CATEGORIES, type ProjectUpdateBody, permits, TRACKING_MODES, type TrackingMode } from '@pigeon/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { account } from '../api';
import { useProject } from '../session';
import { ConfirmDialog } from '../ui/dialog';
import { ErrorNote, Field, Form, Notice, PageHeader, SelectField } from '../ui/kit';

const numberOrNull = (text: string) => (text.trim() === '' ? null : Number(text));

/** Project settings: name, tracking, links, send rate, retention, monthly caps; reset and delete (OWNER). */
export default function SettingsPage() {
  const { project, canManage } = useProject();
  if (!canManage) return <Notice>Project settings need the OWNER or ADMIN role.</Notice>;
  return (
    <>
      <PageHeader title="Project settings" />
      <GeneralSettings />
      <BillingCaps />
      {permits('project.own', project.role) ? <DangerZone /> : null}
    </>
  );
}

function GeneralSettings() {
  const { project } = useProject();
  const queryClient = useQueryClient();
  const [form, setForm] = useState({
    name: project.name,
    trackingMode: project.trackingMode,
    subscribedRedirectUrl: project.subscribedRedirectUrl ?? '',
    unsubscribedRedirectUrl: project.unsubscribedRedirectUrl ?? '',
    unsubscribeMailbox: project.unsubscribeMailbox ?? '',
    campaignSendRate: project.campaignSendRate?.toString() ?? '',
    eventsDays: String(project.retention.eventsDays),
    contentDays: String(project.retention.contentDays),
    emailsDays: String(project.retention.emailsDays),
  });
  const set = (name: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement | HTMLSelectElement>) =>
    setForm((f) => ({ ...f, [name]: e.target.value }));
  /** A field's value, change handler and error, under its name in the API's body (`retention.eventsDays`). */
  const bind = (key: Exclude<keyof typeof form, 'trackingMode'>, name: string = key) => ({
    name,
    value: form[key],
    onChange: set(key),
    error: save.error,
  });
  const save = useMutation({
    mutationFn: () => {
      const body: ProjectUpdateBody = {
        name: form.name,
        trackingMode: form.trackingMode as TrackingMode,
        subscribedRedirectUrl: form.subscribedRedirectUrl || null,
        unsubscribedRedirectUrl: form.unsubscribedRedirectUrl || null,
        unsubscribeMailbox: form.unsubscribeMailbox || null,
        campaignSendRate: numberOrNull(form.campaignSendRate),
        retention: {
          eventsDays: Number(form.eventsDays),
          contentDays: Number(form.contentDays),
          emailsDays: Number(form.emailsDays),
        },
      };
      return account.me.updateProject(project.id, body);
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['projects'] }),
  });
  return (
    <Form className="card" onSubmit={() => save.mutate()}>
      <h2>General</h2>
      <ErrorNote error={save.error} />
      <Field label="Name" required {...bind('name')} />
      <SelectField
        label="Open and click tracking"
        value={form.trackingMode}
        onChange={set('trackingMode')}
        options={TRACKING_MODES.map((m): [string, string] => [
          m,
          m === 'MARKETING_ONLY' ? 'Marketing mail only' : m === 'ENABLED' ? 'All mail' : 'Off',
        ])}
      />
      <Field
        label="After subscribing, send people to"
        type="url"
        hint="Empty: Pigeon's own page"
        {...bind('subscribedRedirectUrl')}
      />
      <Field
        label="After unsubscribing, send people to"
        type="url"
        hint="Empty: Pigeon's own page"
        {...bind('unsubscribedRedirectUrl')}
      />
      <Field label="Unsubscribe mailbox (List-Unsubscribe mailto:)" type="email" {...bind('unsubscribeMailbox')} />
      <Field
        label="Campaign messages per second"
        type="number"
        min="0"
        step="any"
        hint="Empty: as fast as possible (set a rate to warm up a new domain)"
        {...bind('campaignSendRate')}
      />
      <fieldset>
        <legend>Retention (days)</legend>
        <Field label="Events" type="number" min="1" max="3650" {...bind('eventsDays', 'retention.eventsDays')} />
        <Field
          label="Message content"
          type="number"
          min="1"
          max="3650"
          {...bind('contentDays', 'retention.contentDays')}
        />
        <Field label="Email records" type="number" min="1" max="3650" {...bind('emailsDays', 'retention.emailsDays')} />
      </fieldset>
      <button type="submit" className="primary" disabled={save.isPending}>
        Save settings
      </button>
      {save.isSuccess ? <span role="status"> Saved</span> : null}
    </Form>
  );
}

function BillingCaps() {
  const { project, api } = useProject();
  const queryClient = useQueryClient();
  const usage = useQuery({
    queryKey: ['billing-usage', project.id],
    queryFn: () => api.billing.consumption(project.id),
  });
  const [caps, setCaps] = useState<Record<string, string> | null>(null);
  const current = caps ?? {
    transactional: usage.data?.transactional.limit?.toString() ?? '',
    campaigns: usage.data?.campaigns.limit?.toString() ?? '',
    workflows: usage.data?.workflows.limit?.toString() ?? '',
  };
  const save = useMutation({
    mutationFn: () =>
      api.billing.setLimits(project.id, {
        transactional: numberOrNull(current.transactional ?? ''),
        campaigns: numberOrNull(current.campaigns ?? ''),
        workflows: numberOrNull(current.workflows ?? ''),
      }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['billing-usage', project.id] }),
  });
  return (
    <Form className="card" onSubmit={() => save.mutate()}>
      <h2>Monthly caps</h2>
      <p className="muted">
        Mail past a cap is refused (403 BILLING_LIMIT_EXCEEDED) until the month resets. Empty: no cap.
      </p>
      <ErrorNote error={usage.error ?? save.error} />
      {BILLING_CATEGORIES.map((c) => (
        <Field
          key={c}
          label={`${c[0]?.toUpperCase()}${c.slice(1)} (used ${usage.data?.[c].used.toLocaleString() ?? '…'} this month)`}
          name={c}
          type="number"
          min="0"
          value={current[c] ?? ''}
          onChange={(e) => setCaps({ ...current, [c]: e.target.value })}
          error={save.error}
        />
      ))}
      <button type="submit" disabled={save.isPending}>
        Save caps
      </button>
      {save.isSuccess ? <span role="status"> Saved</span> : null}
    </Form>
  );
}

function DangerZone() {
  const { project } = useProject();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [asking, setAsking] = useState<'reset' | 'delete' | null>(null);
  const reset = useMutation({
    mutationFn: () => account.me.resetProject(project.id),
    onSuccess: () => setAsking(null),
  });
  const remove = useMutation({
    mutationFn: () => account.me.deleteProject(project.id),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['projects'] });
      navigate('/');
    },
  });
  return (
    <section className="card danger-zone" aria-labelledby="danger-title">
      <h2 id="danger-title">Danger zone</h2>
      <ErrorNote error={reset.error ?? remove.error} />
      {reset.isSuccess ? <Notice tone="ok">The project's data was wiped.</Notice> : null}
      <div className="actions">
        <button type="button" className="danger" onClick={() => setAsking('reset')}>
          Wipe the project's data
        </button>
        <button type="button" className="danger" onClick={() => setAsking('delete')}>
          Delete the project
        </button>
      </div>
      <ConfirmDialog
        open={asking === 'reset'}
        title={`Wipe ${project.name}'s data?`}
        confirm="Wipe everything"
        busy={reset.isPending}
        onConfirm={() => reset.mutate()}
        onClose={() => setAsking(null)}
      >
        <p>
          Contacts, events, emails, templates, campaigns, segments and workflows are deleted for good. The project, its
          members and keys stay.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={asking === 'delete'}
        title={`Delete ${project.name}?`}
        confirm="Delete the project"
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onClose={() => setAsking(null)}
      >
        <p>The project and all its data are deleted for good; its keys stop working at once.</p>
      </ConfirmDialog>
    </section>
  );
}
