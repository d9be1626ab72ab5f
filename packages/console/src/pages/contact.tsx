import type { Contact } from '@pigeon/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { projectPath, useProject } from '../session';
import { ConfirmDialog } from '../ui/dialog';
import { ErrorNote, Form, Loading, Notice, PageHeader, StatusChip, Time } from '../ui/kit';

/** One contact: data (editable), subscription, suppression, its events and its emails. */
export default function ContactPage() {
  const { contactId = '' } = useParams();
  const { project, api } = useProject();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const contact = useQuery({ queryKey: ['contact', contactId], queryFn: () => api.contacts.get(contactId) });
  const email = contact.data?.email;
  const suppression = useQuery({
    queryKey: ['suppression', project.id, email],
    queryFn: () => api.suppressions.list({ email, limit: 1 }),
    enabled: Boolean(email),
  });
  const events = useQuery({
    queryKey: ['contact-events', contactId],
    queryFn: () => api.events.forContact(contactId, { limit: 10 }),
  });
  const emails = useQuery({
    queryKey: ['contact-emails', contactId],
    queryFn: () => api.emails.list({ contactId, limit: 10 }),
  });
  const saved = (c: Contact) => {
    queryClient.setQueryData(['contact', contactId], c);
    queryClient.invalidateQueries({ queryKey: ['contacts', project.id] });
  };
  const subscription = useMutation({
    mutationFn: (subscribed: boolean) => api.contacts.update(contactId, { subscribed }),
    onSuccess: saved,
  });
  const remove = useMutation({
    mutationFn: () => api.contacts.delete(contactId),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['contacts', project.id] });
      navigate(projectPath(project.id, 'contacts'));
    },
  });
  if (contact.isPending) return <Loading />;
  if (contact.error) return <ErrorNote error={contact.error} />;
  const c = contact.data;
  const suppressed = suppression.data?.data[0];
  return (
    <>
      <p>
        <Link to={projectPath(project.id, 'contacts')}>← Contacts</Link>
      </p>
      <PageHeader title={c.email}>
        <button type="button" onClick={() => subscription.mutate(!c.subscribed)} disabled={subscription.isPending}>
          {c.subscribed ? 'Unsubscribe' : 'Subscribe'}
        </button>
        <button type="button" className="danger" onClick={() => setConfirmDelete(true)}>
          Delete
        </button>
      </PageHeader>
      <ErrorNote error={subscription.error ?? remove.error} />
      <dl className="facts">
        <dt>Subscribed</dt>
        <dd>{c.subscribed ? 'Yes' : 'No'}</dd>
        <dt>Created</dt>
        <dd>
          <Time iso={c.createdAt} />
        </dd>
        <dt>Updated</dt>
        <dd>
          <Time iso={c.updatedAt} />
        </dd>
      </dl>
      {suppressed ? (
        <Notice tone="warn">
          This address is suppressed ({suppressed.reason}, <Time iso={suppressed.createdAt} />
          ): no mail is sent to it.{' '}
          <Link to={projectPath(project.id, `suppressions?email=${encodeURIComponent(c.email)}`)}>Suppressions</Link>
        </Notice>
      ) : null}
      <DataEditor contact={c} onSaved={saved} />
      <section className="card" aria-labelledby="contact-events">
        <h2 id="contact-events">Latest events</h2>
        <ErrorNote error={events.error} />
        {events.data?.data.length ? (
          <ul className="plain-list">
            {events.data.data.map((e) => (
              <li key={e.id}>
                <Time iso={e.createdAt} /> <strong>{e.name}</strong>
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">No events.</p>
        )}
        <Link to={projectPath(project.id, `events?contact=${c.id}`)}>All events of this contact</Link>
      </section>
      <section className="card" aria-labelledby="contact-emails">
        <h2 id="contact-emails">Latest emails</h2>
        <ErrorNote error={emails.error} />
        {emails.data?.data.length ? (
          <ul className="plain-list">
            {emails.data.data.map((e) => (
              <li key={e.id}>
                <StatusChip status={e.status} /> <Link to={projectPath(project.id, `emails/${e.id}`)}>{e.subject}</Link>{' '}
                <Time iso={e.createdAt} />
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">No emails.</p>
        )}
        <Link to={projectPath(project.id, `emails?to=${encodeURIComponent(c.email)}`)}>All emails to this address</Link>
      </section>
      <ConfirmDialog
        open={confirmDelete}
        title={`Delete ${c.email}?`}
        confirm="Delete the contact"
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onClose={() => setConfirmDelete(false)}
      >
        <p>Its data, subscription and segment memberships go. Its emails and events stay in the history.</p>
      </ConfirmDialog>
    </>
  );
}

type Row = { id: number; key: string; value: string };
let nextRowId = 0;
const asText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
/** A typed value back: numbers and booleans as such, JSON objects parsed, anything else text. */
function parseValue(text: string): unknown {
  if (text === 'true' || text === 'false') return text === 'true';
  if (text.trim() !== '' && !Number.isNaN(Number(text))) return Number(text);
  if (/^[[{]/.test(text.trim())) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** The contact's data as rows of key and value; saving sends what changed (a removed key as null). */
function DataEditor({ contact, onSaved }: { contact: Contact; onSaved: (c: Contact) => void }) {
  const { api } = useProject();
  const initial = Object.entries(contact.data).map(([key, value]) => ({ id: nextRowId++, key, value: asText(value) }));
  const [rows, setRows] = useState<Row[]>(initial);
  const save = useMutation({
    mutationFn: () => {
      const data: Record<string, unknown> = {};
      for (const key of Object.keys(contact.data)) if (!rows.some((r) => r.key === key)) data[key] = null;
      for (const row of rows) if (row.key.trim()) data[row.key.trim()] = parseValue(row.value);
      return api.contacts.update(contact.id, { data });
    },
    onSuccess: onSaved,
  });
  const set = (i: number, patch: Partial<Row>) =>
    setRows((all) => all.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <section className="card" aria-labelledby="contact-data">
      <h2 id="contact-data">Data</h2>
      <Form onSubmit={() => save.mutate()}>
        <ErrorNote error={save.error} />
        {rows.length === 0 ? (
          <p className="muted">No custom data. Add a field, or send it with a track or send.</p>
        ) : null}
        {rows.map((row, i) => (
          <div className="data-row" key={row.id}>
            <input
              aria-label={`Field ${i + 1} name`}
              value={row.key}
              onChange={(e) => set(i, { key: e.target.value })}
            />
            <input
              aria-label={`Field ${i + 1} value`}
              value={row.value}
              onChange={(e) => set(i, { value: e.target.value })}
            />
            <button type="button" className="small" onClick={() => setRows((all) => all.filter((_, j) => j !== i))}>
              Remove
            </button>
          </div>
        ))}
        <div className="actions">
          <button type="button" onClick={() => setRows((all) => [...all, { id: nextRowId++, key: '', value: '' }])}>
            Add field
          </button>
          <button type="submit" className="primary" disabled={save.isPending}>
            Save data
          </button>
          {save.isSuccess ? <span role="status">Saved</span> : null}
        </div>
      </Form>
    </section>
  );
}
