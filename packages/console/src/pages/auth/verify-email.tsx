import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { account } from '../../api';
import { ErrorNote, Notice } from '../../ui/kit';
import { AuthFrame, fragmentParam } from './frame';

/** The link in the verification mail opens this page; the person's click confirms (a link scanner changes nothing). */
export default function VerifyEmailPage() {
  const [token] = useState(() => fragmentParam('token'));
  const verify = useMutation({ mutationFn: () => account.auth.verifyEmail(token) });
  return (
    <AuthFrame title="Confirm your email address">
      {verify.isSuccess ? (
        <Notice tone="ok">
          {verify.data.email} is confirmed. <Link to="/">Open the console</Link>
        </Notice>
      ) : (
        <>
          <ErrorNote error={verify.error} />
          <button
            type="button"
            className="primary"
            disabled={!token || verify.isPending}
            onClick={() => verify.mutate()}
          >
            Confirm my address
          </button>
        </>
      )}
    </AuthFrame>
  );
}
