import type { Segment } from '@pigeon/sdk';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { projectPath, useProject } from '../../session';
import { ErrorNote, Form, Loading, Notice, Table, Time } from '../../ui/kit';
import { OffsetPager } from '../../ui/pager';

const PAGE_SIZE = 50;

/** The segment's members a page at a time (evaluated live for DYNAMIC); STATIC ones are added and removed by email. */
export function Members({ segment }: { segment: Segment }) {
  const { project, api } = useProject();
  const [page, setPage] = useState(1);
  const members = useQuery({
    queryKey: ['segment-members', project.id, segment.id, page],
    queryFn: () => api.segments.contacts(segment.id, { page, pageSize: PAGE_SIZE }),
    placeholderData: keepPreviousData,
  });
  const pages = members.data ? Math.max(1, Math.ceil(members.data.total / PAGE_SIZE)) : 1;
  return (
    <section className="card" aria-labelledby="segment-members">
      <h2 id="segment-members">Members</h2>
      {segment.type === 'STATIC' ? <EditMembers segment={segment} /> : null}
      <ErrorNote error={members.error} />
      {members.isPending ? <Loading /> : null}
      {members.data && members.data.data.length === 0 ? (
        <p className="muted">No contact is in this segment now.</p>
      ) : null}
      {members.data && members.data.data.length > 0 ? (
        <>
          <Table caption="Members of the segment" headings={['Email', 'Subscribed', 'Created']}>
            {members.data.data.map((c) => (
              <tr key={c.id}>
                <td>
                  <Link to={projectPath(project.id, `contacts/${c.id}`)}>{c.email}</Link>
                </td>
                <td>{c.subscribed ? 'yes' : 'no'}</td>
                <td>
                  <Time iso={c.createdAt} />
                </td>
              </tr>
            ))}
          </Table>
          <OffsetPager page={page} totalPages={pages} onPage={setPage} label="Member pages">
            ({members.data.total.toLocaleString()} members)
          </OffsetPager>
        </>
      ) : null}
    </section>
  );
}

function EditMembers({ segment }: { segment: Segment }) {
  const { project, api } = useProject();
  const queryClient = useQueryClient();
  const [text, setText] = useState('');
  const emails = text
    .split(/[\s,;]+/)
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  const change = useMutation({
    mutationFn: (how: 'add' | 'remove') =>
      how === 'add'
        ? api.segments.addMembers(segment.id, emails, { createMissing: true })
        : api.segments.removeMembers(segment.id, emails),
    onSuccess: async () => {
      setText('');
      await queryClient.invalidateQueries({ queryKey: ['segment-members', project.id, segment.id] });
      await queryClient.invalidateQueries({ queryKey: ['segment', project.id, segment.id] });
    },
  });
  return (
    <Form className="card" onSubmit={() => change.mutate('add')}>
      <div className="field">
        <label htmlFor="member-emails">Email addresses (up to 1,000, separated by spaces, commas or lines)</label>
        <textarea id="member-emails" rows={3} value={text} onChange={(e) => setText(e.target.value)} />
      </div>
      <ErrorNote error={change.error} />
      {change.data ? (
        <Notice tone="ok">
          {Object.entries(
            change.data.results.reduce<Record<string, number>>((acc, r) => {
              acc[r.status] = (acc[r.status] ?? 0) + 1;
              return acc;
            }, {}),
          )
            .map(([status, n]) => `${n} ${status.replace('_', ' ')}`)
            .join(', ')}
          ; {change.data.memberCount} members now.
        </Notice>
      ) : null}
      <div className="actions">
        <button type="submit" className="primary" disabled={emails.length === 0 || change.isPending}>
          Add to segment
        </button>
        <button
          type="button"
          className="secondary"
          disabled={emails.length === 0 || change.isPending}
          onClick={() => change.mutate('remove')}
        >
          Remove from segment
        </button>
      </div>
    </Form>
  );
}
