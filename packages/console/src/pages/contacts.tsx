import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { projectPath, useProject } from '../session';
import { ConfirmDialog, Dialog } from '../ui/dialog';
import {
  EmailField,
  EmptyState,
  ErrorNote,
  Form,
  Loading,
  PageHeader,
  Progress,
  SelectField,
  Table,
  Time,
} from '../ui/kit';
import { Pager, useCursor, useFilter } from '../ui/pager';

/** Contacts: search by email, subscription filter, a page at a time however many there are. */
export default function ContactsPage() {
  const { project, api } = useProject();
  const pager = useCursor();
  const [search, setSearch] = useFilter('search');
  const [subscribed, setSubscribed] = useFilter('subscribed');
  const [typed, setTyped] = useState(search);
  const [adding, setAdding] = useState(false);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  // Debounced: one request when typing pauses, not one per key.
  useEffect(() => {
    const timer = setTimeout(() => typed !== search && setSearch(typed.trim()), 300);
    return () => clearTimeout(timer);
  }, [typed, search, setSearch]);
  const query = {
    limit: 50,
    cursor: pager.cursor,
    search: search || undefined,
    subscribed: (subscribed || undefined) as 'true' | 'false' | undefined,
  };
  const contacts = useQuery({
    queryKey: ['contacts', project.id, query],
    queryFn: () => api.contacts.list(query),
    placeholderData: keepPreviousData,
  });
  return (
    <>
      <PageHeader title="Contacts">
        <Link className="button" to={projectPath(project.id, 'contacts/import')}>
          Import CSV
        </Link>
        <button type="button" className="primary" onClick={() => setAdding(true)}>
          Add contact
        </button>
      </PageHeader>
      <div className="filters">
        <div className="field">
          <label htmlFor="contact-search">Search by email</label>
          <input id="contact-search" type="search" value={typed} onChange={(e) => setTyped(e.target.value)} />
        </div>
        <SelectField
          label="Subscription"
          value={subscribed}
          onChange={(e) => setSubscribed(e.target.value)}
          options={[
            ['', 'Everyone'],
            ['true', 'Subscribed'],
            ['false', 'Unsubscribed'],
          ]}
        />
      </div>
      <ErrorNote error={contacts.error} />
      {contacts.isPending ? <Loading /> : null}
      {contacts.data && contacts.data.data.length === 0 ? (
        <EmptyState title={search ? 'No contact matches' : 'No contacts yet'}>
          <p>
            Contacts are created when you send or track for an address, by import, or here.{' '}
            <Link to={projectPath(project.id, 'contacts/import')}>Import a CSV file</Link>.
          </p>
        </EmptyState>
      ) : null}
      {contacts.data && contacts.data.data.length > 0 ? (
        <>
          {pager.isFirst ? <p className="muted">{contacts.data.total.toLocaleString()} contacts</p> : null}
          <BulkActions ids={[...selected]} onDone={() => setSelected(new Set())} />
          <Table
            caption="Contacts"
            headings={[
              <input
                key="select-all"
                type="checkbox"
                aria-label="Select every contact of this page"
                // The previous page stays on screen while this one loads: nothing is selected from it.
                disabled={contacts.isPlaceholderData}
                checked={contacts.data.data.every((c) => selected.has(c.id))}
                onChange={(e) => setSelected(new Set(e.target.checked ? contacts.data.data.map((c) => c.id) : []))}
              />,
              'Email',
              'Subscribed',
              'Created',
            ]}
          >
            {contacts.data.data.map((c) => (
              <tr key={c.id}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${c.email}`}
                    disabled={contacts.isPlaceholderData}
                    checked={selected.has(c.id)}
                    onChange={(e) =>
                      setSelected((all) => {
                        const next = new Set(all);
                        if (e.target.checked) next.add(c.id);
                        else next.delete(c.id);
                        return next;
                      })
                    }
                  />
                </td>
                <td>
                  <Link to={projectPath(project.id, `contacts/${c.id}`)}>{c.email}</Link>
                </td>
                <td>{c.subscribed ? 'Yes' : 'No'}</td>
                <td>
                  <Time iso={c.createdAt} />
                </td>
              </tr>
            ))}
          </Table>
          <Pager page={contacts.data} pager={pager} label="Contacts" />
        </>
      ) : null}
      <AddContact open={adding} onClose={() => setAdding(false)} />
    </>
  );
}

function AddContact({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { project, api } = useProject();
  const [email, setEmail] = useState('');
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const add = useMutation({
    mutationFn: () => api.contacts.create({ email }),
    onSuccess: async (contact) => {
      await queryClient.invalidateQueries({ queryKey: ['contacts', project.id] });
      navigate(projectPath(project.id, `contacts/${contact.id}`));
    },
  });
  return (
    <Dialog open={open} title="Add a contact" onClose={onClose}>
      <Form onSubmit={() => add.mutate()}>
        <ErrorNote error={add.error} />
        <EmailField value={email} onChange={setEmail} error={add.error} />
        <div className="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={add.isPending}>
            Add
          </button>
        </div>
      </Form>
    </Dialog>
  );
}

type BulkKind = 'subscribe' | 'unsubscribe' | 'delete';

/** Subscribe, unsubscribe or delete the selected contacts: a bulk job, followed until it is done. */
function BulkActions({ ids, onDone }: { ids: string[]; onDone: () => void }) {
  const { project, api } = useProject();
  const queryClient = useQueryClient();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [jobId, setJobId] = useState('');
  const start = useMutation({
    mutationFn: (kind: BulkKind) =>
      kind === 'subscribe'
        ? api.contacts.bulkSubscribe(ids)
        : kind === 'unsubscribe'
          ? api.contacts.bulkUnsubscribe(ids)
          : api.contacts.bulkDelete(ids),
    onSuccess: (accepted) => {
      setConfirmDelete(false);
      setJobId(accepted.jobId);
      onDone();
    },
  });
  const job = useQuery({
    queryKey: ['bulk', jobId],
    queryFn: () => api.contacts.bulkStatus(jobId),
    enabled: Boolean(jobId),
    refetchInterval: (q) => {
      const done = q.state.data && ['completed', 'failed'].includes(q.state.data.status);
      if (done) queryClient.invalidateQueries({ queryKey: ['contacts', project.id] });
      return done ? false : 500;
    },
  });
  if (ids.length === 0 && !jobId) return null;
  return (
    <div className="bulk card" aria-live="polite">
      {ids.length ? (
        <div className="actions">
          <span>{ids.length} selected</span>
          <button type="button" onClick={() => start.mutate('subscribe')} disabled={start.isPending}>
            Subscribe
          </button>
          <button type="button" onClick={() => start.mutate('unsubscribe')} disabled={start.isPending}>
            Unsubscribe
          </button>
          <button type="button" className="danger" onClick={() => setConfirmDelete(true)} disabled={start.isPending}>
            Delete
          </button>
        </div>
      ) : null}
      <ErrorNote error={start.error ?? job.error} />
      {job.data ? (
        <Progress label={`Bulk change (${job.data.status})`} value={job.data.processed} max={job.data.total} />
      ) : null}
      <ConfirmDialog
        open={confirmDelete}
        title={`Delete ${ids.length} contacts?`}
        confirm="Delete them"
        busy={start.isPending}
        onConfirm={() => start.mutate('delete')}
        onClose={() => setConfirmDelete(false)}
      >
        <p>Their data, subscriptions and segment memberships go. Their emails and events stay in the history.</p>
      </ConfirmDialog>
    </div>
  );
}
