import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { projectPath, useProject } from '../session';
import { EmptyState, ErrorNote, Loading, PageHeader, StatusChip, Table, Time } from '../ui/kit';

/** Segments: each with its cached member count and when it was counted, and the way to build a new one. */
export default function SegmentsPage() {
  const { project, api } = useProject();
  const segments = useQuery({ queryKey: ['segments', project.id], queryFn: () => api.segments.list() });
  return (
    <>
      <PageHeader title="Segments">
        <Link className="button primary" to={projectPath(project.id, 'segments/new')}>
          New segment
        </Link>
      </PageHeader>
      <ErrorNote error={segments.error} />
      {segments.isPending ? <Loading /> : null}
      {segments.data?.length === 0 ? (
        <EmptyState title="No segment yet">
          <p>
            A segment is a set of contacts: DYNAMIC ones by a condition on their data, events and email activity (always
            current), STATIC ones by hand. Campaigns send to them; workflows react to contacts entering them.
          </p>
          <Link to={projectPath(project.id, 'segments/new')}>Build the first segment</Link>
        </EmptyState>
      ) : null}
      {segments.data?.length ? (
        <Table caption="Segments" headings={['Name', 'Type', 'Members', 'Tracked', 'Created']}>
          {segments.data.map((s) => (
            <tr key={s.id}>
              <td>
                <Link to={projectPath(project.id, `segments/${s.id}`)}>{s.name}</Link>
                {s.description ? <div className="muted">{s.description}</div> : null}
              </td>
              <td>
                <StatusChip status={s.type} />
              </td>
              <td>
                <span>{s.memberCount.toLocaleString()}</span>
                {s.memberCountAt ? (
                  <div className="muted">
                    counted <Time iso={s.memberCountAt} relative />
                  </div>
                ) : null}
              </td>
              <td>{s.trackMembership ? 'entry and exit events' : 'no'}</td>
              <td>
                <Time iso={s.createdAt} />
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
    </>
  );
}
