import type { Domain } from '@pigeon/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { account } from '../api';
import { useProject } from '../session';
import { ConfirmDialog } from '../ui/dialog';
import {
  CopyButton,
  EmptyState,
  ErrorNote,
  Field,
  Form,
  Loading,
  Notice,
  PageHeader,
  StatusChip,
  Time,
} from '../ui/kit';

/** Sender domains: add one, publish its records (copy buttons), verify now, and the project's default sender. */
export default function DomainsPage() {
  const { project, api, canManage } = useProject();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const domains = useQuery({ queryKey: ['domains', project.id], queryFn: () => api.domains.list(project.id) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['domains', project.id] });
  const add = useMutation({
    mutationFn: () => api.domains.create(name.trim().toLowerCase()),
    onSuccess: () => {
      setName('');
      refresh();
    },
  });
  return (
    <>
      <PageHeader title="Domains" />
      {canManage ? (
        <Form className="card inline-form" onSubmit={() => add.mutate()}>
          <Field
            label="Add a sender domain"
            name="domain"
            placeholder="mail.example.com"
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
            error={add.error}
          />
          <button type="submit" className="primary" disabled={add.isPending}>
            Add domain
          </button>
          <ErrorNote error={add.error} />
        </Form>
      ) : (
        <Notice>Adding and removing domains needs the OWNER or ADMIN role.</Notice>
      )}
      <ErrorNote error={domains.error} />
      {domains.isPending ? <Loading /> : null}
      {domains.data?.length === 0 ? (
        <EmptyState title="No domain yet">
          <p>
            Add the domain you send from; Pigeon gives you the DNS records that prove it is yours and sign your mail.
          </p>
        </EmptyState>
      ) : null}
      {domains.data?.map((d) => (
        <DomainCard key={d.id} domain={d} onChange={refresh} />
      ))}
      {canManage ? <DefaultSender domains={domains.data ?? []} /> : null}
    </>
  );
}

function DomainCard({ domain, onChange }: { domain: Domain; onChange: () => void }) {
  const { api, canManage } = useProject();
  const [confirm, setConfirm] = useState(false);
  const verify = useMutation({ mutationFn: () => api.domains.verify(domain.id), onSuccess: onChange });
  const remove = useMutation({ mutationFn: () => api.domains.delete(domain.id), onSuccess: onChange });
  return (
    <section className="card" aria-labelledby={`domain-${domain.id}`}>
      <div className="card-header">
        <h2 id={`domain-${domain.id}`}>{domain.domain}</h2>
        <StatusChip status={domain.status} />
        <span className="muted">
          last checked <Time iso={domain.lastCheckedAt} />
        </span>
        <div className="actions">
          <button type="button" onClick={() => verify.mutate()} disabled={verify.isPending}>
            {verify.isPending ? 'Checking…' : 'Verify now'}
          </button>
          {canManage ? (
            <button type="button" className="danger" onClick={() => setConfirm(true)}>
              Remove
            </button>
          ) : null}
        </div>
      </div>
      {domain.note ? <Notice>{domain.note}</Notice> : null}
      <ErrorNote error={verify.error ?? remove.error} />
      <div className="table-wrap">
        <table className="stack">
          <caption>DNS records to publish</caption>
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {domain.records.map((r) => (
              <tr key={`${r.purpose}-${r.name}`}>
                <td data-label="Type">
                  {r.type}{' '}
                  <span className="muted">
                    ({r.purpose.toUpperCase()}
                    {r.required ? '' : ', suggested'})
                  </span>
                </td>
                <td className="record" data-label="Name">
                  <code>{r.name}</code> <CopyButton value={r.name} label={`Copy the ${r.purpose} name`} />
                </td>
                <td className="record" data-label="Value">
                  <code className="wrap">{r.value}</code>{' '}
                  <CopyButton value={r.value} label={`Copy the ${r.purpose} value`} />
                </td>
                <td data-label="Status">
                  <StatusChip status={r.status} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ConfirmDialog
        open={confirm}
        title={`Remove ${domain.domain}?`}
        confirm="Remove the domain"
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onClose={() => setConfirm(false)}
      >
        <p>Mail from this domain is refused until it is added and verified again, and its DKIM key is deleted.</p>
      </ConfirmDialog>
    </section>
  );
}

function DefaultSender({ domains }: { domains: Domain[] }) {
  const { project } = useProject();
  const queryClient = useQueryClient();
  const [from, setFrom] = useState(project.defaultFrom ?? '');
  const save = useMutation({
    mutationFn: () => account.me.updateProject(project.id, { defaultFrom: from.trim() || null }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['projects'] }),
  });
  const verified = domains.filter((d) => d.status === 'verified').map((d) => d.domain);
  return (
    <Form className="card" onSubmit={() => save.mutate()}>
      <h2>Default sender</h2>
      <p className="muted">
        Used by sends that name no sender and no template with one. It must be on a verified domain
        {verified.length ? ` (${verified.join(', ')})` : ''}.
      </p>
      <ErrorNote error={save.error} />
      <Field
        label="Sender address"
        name="defaultFrom"
        type="email"
        placeholder={`hello@${verified[0] ?? 'example.com'}`}
        value={from}
        onChange={(e) => setFrom(e.target.value)}
        error={save.error}
      />
      <button type="submit" disabled={save.isPending}>
        Save default sender
      </button>
      {save.isSuccess ? <span role="status"> Saved</span> : null}
    </Form>
  );
}
