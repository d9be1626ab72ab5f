import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { account } from '../../api';
import { meQuery, projectPath } from '../../session';
import { ErrorNote } from '../../ui/kit';
import { AuthFrame, fragmentParam } from './frame';

/** Opened from an invitation mail, signed in (as the invited address): one click joins the project. */
export default function AcceptInvitationPage() {
  const [token] = useState(() => fragmentParam('token'));
  const me = useQuery(meQuery);
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const accept = useMutation({
    mutationFn: () => account.auth.acceptInvitation(token),
    onSuccess: async ({ projectId }) => {
      await queryClient.invalidateQueries({ queryKey: ['projects'] });
      navigate(projectPath(projectId));
    },
  });
  return (
    <AuthFrame title="Join a project">
      <p>
        You are signed in as <strong>{me.data?.email}</strong>. The invitation must be for this address.
      </p>
      <ErrorNote error={accept.error} />
      <button type="button" className="primary" disabled={!token || accept.isPending} onClick={() => accept.mutate()}>
        Accept the invitation
      </button>
    </AuthFrame>
  );
}
