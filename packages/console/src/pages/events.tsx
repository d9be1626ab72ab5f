import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { projectPath, useProject } from '../session';
import { EmptyState, ErrorNote, Loading, PageHeader, SelectField, Table, Time } from '../ui/kit';
import { Pager, useCursor, useFilter } from '../ui/pager';

/** Recent events, newest first, by name or of one contact (`?contact=`). */
export default function EventsPage() {
  const { project, api } = useProject();
  const pager = useCursor();
  const [name, setName] = useFilter('name');
  const [contact, setContact] = useFilter('contact');
  const names = useQuery({ queryKey: ['event-names', project.id], queryFn: () => api.events.names() });
  const query = { limit: 50, cursor: pager.cursor, name: name || undefined };
  const events = useQuery({
    queryKey: ['events', project.id, contact, query],
    queryFn: () =>
      contact ? api.events.forContact(contact, { limit: 50, cursor: pager.cursor }) : api.events.list(query),
    placeholderData: keepPreviousData,
  });
  return (
    <>
      <PageHeader title="Events" />
      <div className="filters">
        <SelectField
          label="Event name"
          value={name}
          disabled={Boolean(contact)}
          onChange={(e) => setName(e.target.value)}
          options={[
            ['', 'All events'],
            ...(names.data ?? []).map((n): [string, string] => [n.name, `${n.name} (${n.count.toLocaleString()})`]),
          ]}
        />
        {contact ? (
          <p>
            Events of one contact.{' '}
            <button type="button" className="small" onClick={() => setContact('')}>
              Show every contact's
            </button>
          </p>
        ) : null}
      </div>
      <ErrorNote error={events.error ?? names.error} />
      {events.isPending ? <Loading /> : null}
      {events.data && events.data.data.length === 0 ? (
        <EmptyState title="No events yet">
          <p>Record what your users do from your app with the public key:</p>
          <pre>{`await pigeon.events.track({ email: 'user@example.com', event: 'signed-up', data: { plan: 'pro' } });`}</pre>
        </EmptyState>
      ) : null}
      {events.data && events.data.data.length > 0 ? (
        <>
          <Table caption="Events, newest first" headings={['Event', 'Contact', 'Data', 'When']}>
            {events.data.data.map((event) => (
              <tr key={event.id}>
                <td>{event.name}</td>
                <td>
                  {event.contactId ? (
                    <Link to={projectPath(project.id, `contacts/${event.contactId}`)}>
                      {event.contactEmail ?? 'contact'}
                    </Link>
                  ) : (
                    '—'
                  )}
                </td>
                <td>
                  <code className="data">{JSON.stringify(event.data)}</code>
                </td>
                <td>
                  <Time iso={event.createdAt} />
                </td>
              </tr>
            ))}
          </Table>
          <Pager page={events.data} pager={pager} label="Events" />
        </>
      ) : null}
    </>
  );
}
