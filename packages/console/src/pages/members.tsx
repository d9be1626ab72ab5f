import { type Member, ROLES, type Role } from '@pigeon/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { account } from '../api';
import { meQuery, useProject } from '../session';
import { ConfirmDialog } from '../ui/dialog';
import { EmailField, ErrorNote, Form, Loading, Notice, PageHeader, SelectField, Table, Time } from '../ui/kit';

/** Who has access: members and pending invitations; OWNER and ADMIN invite, change roles and remove. */
export default function MembersPage() {
  const { project, canManage } = useProject();
  const me = useQuery(meQuery);
  const queryClient = useQueryClient();
  const members = useQuery({
    queryKey: ['members', project.id],
    queryFn: () => account.projects.members.list(project.id),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['members', project.id] });
  const [removing, setRemoving] = useState<Member | null>(null);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('MEMBER');
  const invite = useMutation({
    mutationFn: () => account.projects.members.invite(project.id, email, role),
    onSuccess: () => {
      setEmail('');
      refresh();
    },
  });
  const setMemberRole = useMutation({
    mutationFn: ({ userId, to }: { userId: string; to: Role }) =>
      account.projects.members.setRole(project.id, userId, to),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: (userId: string) => account.projects.members.remove(project.id, userId),
    onSuccess: () => {
      setRemoving(null);
      refresh();
    },
  });
  // Only an OWNER grants or takes away OWNER: an ADMIN is not offered it.
  const grantable = ROLES.filter((r) => r !== 'OWNER' || project.role === 'OWNER');
  return (
    <>
      <PageHeader title="Members" />
      <ErrorNote error={members.error ?? setMemberRole.error ?? remove.error} />
      {remove.data?.sawSecretKey ? (
        <Notice tone="warn">{remove.data.suggestion ?? 'They could see the secret key: regenerate the keys.'}</Notice>
      ) : null}
      {members.isPending ? <Loading /> : null}
      {members.data ? (
        <Table
          caption="Members"
          headings={[
            'Email',
            'Role',
            'Joined',
            <span key="actions" className="sr-only">
              Actions
            </span>,
          ]}
        >
          {members.data.members.map((m) => (
            <tr key={m.userId}>
              <td>
                {m.email}
                {m.userId === me.data?.id ? <span className="muted"> (you)</span> : null}
              </td>
              <td>
                {canManage && (m.role !== 'OWNER' || project.role === 'OWNER') ? (
                  <select
                    aria-label={`Role of ${m.email}`}
                    value={m.role}
                    onChange={(e) => setMemberRole.mutate({ userId: m.userId, to: e.target.value as Role })}
                  >
                    {grantable.map((r) => (
                      <option key={r}>{r}</option>
                    ))}
                  </select>
                ) : (
                  m.role
                )}
              </td>
              <td>
                <Time iso={m.joinedAt} />
              </td>
              <td>
                {canManage && (m.role !== 'OWNER' || project.role === 'OWNER') ? (
                  <button type="button" className="small" onClick={() => setRemoving(m)}>
                    Remove
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
      {members.data?.invitations.length ? (
        <section className="card" aria-labelledby="invitations">
          <h2 id="invitations">Pending invitations</h2>
          <ul className="plain-list">
            {members.data.invitations.map((i) => (
              <li key={i.id}>
                {i.email} as {i.role}, until <Time iso={i.expiresAt} />
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {canManage ? (
        <Form className="card" onSubmit={() => invite.mutate()}>
          <h2>Invite someone</h2>
          <p className="muted">An existing account is added at once; any other address gets an invitation by mail.</p>
          <ErrorNote error={invite.error} />
          {invite.data ? (
            <Notice tone="ok">
              {invite.data.status === 'added'
                ? `${invite.data.member.email} was added.`
                : `An invitation went to ${invite.data.invitation.email}.`}
            </Notice>
          ) : null}
          <EmailField value={email} onChange={setEmail} error={invite.error} />
          <SelectField
            label="Role"
            value={role}
            onChange={(e) => setRole(e.target.value as Role)}
            options={grantable.map((r): [string, string] => [r, r])}
          />
          <button type="submit" className="primary" disabled={invite.isPending}>
            Invite
          </button>
        </Form>
      ) : (
        <Notice>Inviting and removing members needs the OWNER or ADMIN role.</Notice>
      )}
      <ConfirmDialog
        open={removing !== null}
        title={`Remove ${removing?.email ?? ''}?`}
        confirm="Remove the member"
        busy={remove.isPending}
        onConfirm={() => removing && remove.mutate(removing.userId)}
        onClose={() => setRemoving(null)}
      >
        <p>They lose access to this project at once.</p>
      </ConfirmDialog>
    </>
  );
}
