import type { Suppression } from '@pigeon/sdk';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { projectPath, useProject } from '../session';
import { ConfirmDialog } from '../ui/dialog';
import { EmptyState, ErrorNote, Form, Loading, PageHeader, Table, Time } from '../ui/kit';
import { Pager, useCursor, useFilter } from '../ui/pager';

/** Addresses Pigeon will not send to (hard bounces, complaints, unsubscribes from lists), and removing one. */
export default function SuppressionsPage() {
  const { project, api } = useProject();
  const pager = useCursor();
  const [email, setEmail] = useFilter('email');
  const [typed, setTyped] = useState(email);
  const [removing, setRemoving] = useState<Suppression | null>(null);
  const queryClient = useQueryClient();
  const query = { limit: 50, cursor: pager.cursor, email: email || undefined };
  const list = useQuery({
    queryKey: ['suppressions', project.id, query],
    queryFn: () => api.suppressions.list(query),
    placeholderData: keepPreviousData,
  });
  const remove = useMutation({
    mutationFn: (id: string) => api.suppressions.delete(id),
    onSuccess: async () => {
      setRemoving(null);
      await queryClient.invalidateQueries({ queryKey: ['suppressions', project.id] });
    },
  });
  return (
    <>
      <PageHeader title="Suppressions" />
      <Form className="filters" onSubmit={() => setEmail(typed.trim().toLowerCase())}>
        <div className="field">
          <label htmlFor="suppressed-email">Address</label>
          <input id="suppressed-email" type="search" value={typed} onChange={(e) => setTyped(e.target.value)} />
        </div>
        <button type="submit">Find</button>
      </Form>
      <ErrorNote error={list.error ?? remove.error} />
      {list.isPending ? <Loading /> : null}
      {list.data && list.data.data.length === 0 ? (
        <EmptyState title="No suppressed addresses">
          <p>Addresses land here when they hard-bounce or complain; mail to them is not sent.</p>
        </EmptyState>
      ) : null}
      {list.data && list.data.data.length > 0 ? (
        <>
          <Table
            caption="Suppressed addresses"
            headings={[
              'Address',
              'Reason',
              'Since',
              <span key="actions" className="sr-only">
                Actions
              </span>,
            ]}
          >
            {list.data.data.map((s) => (
              <tr key={s.id}>
                <td>{s.email}</td>
                <td>
                  {s.reason}
                  {s.emailId ? (
                    <>
                      {' '}
                      (<Link to={projectPath(project.id, `emails/${s.emailId}`)}>the email</Link>)
                    </>
                  ) : null}
                  {s.detail ? <div className="muted">{s.detail}</div> : null}
                </td>
                <td>
                  <Time iso={s.createdAt} />
                </td>
                <td>
                  <button type="button" className="small" onClick={() => setRemoving(s)}>
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </Table>
          <Pager page={list.data} pager={pager} label="Suppressions" />
        </>
      ) : null}
      <ConfirmDialog
        open={removing !== null}
        title={`Send to ${removing?.email ?? ''} again?`}
        confirm="Remove the suppression"
        busy={remove.isPending}
        onConfirm={() => removing && remove.mutate(removing.id)}
        onClose={() => setRemoving(null)}
      >
        <p>Mail to this address will be sent again. Another hard bounce or complaint suppresses it again.</p>
      </ConfirmDialog>
    </>
  );
}
