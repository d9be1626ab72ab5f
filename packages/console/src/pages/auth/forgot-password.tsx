import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { account } from '../../api';
import { EmailField, ErrorNote, Form, Notice } from '../../ui/kit';
import { AuthFrame } from './frame';

export default function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const request = useMutation({ mutationFn: () => account.auth.requestPasswordReset(email) });
  return (
    <AuthFrame title="Reset your password">
      {request.isSuccess ? (
        <Notice tone="ok">
          If an account has this address, a link to reset its password is on its way. It works once, for an hour.
        </Notice>
      ) : (
        <Form onSubmit={() => request.mutate()}>
          <ErrorNote error={request.error} />
          <EmailField value={email} onChange={setEmail} error={request.error} account />
          <button type="submit" className="primary" disabled={request.isPending}>
            Mail me a link
          </button>
        </Form>
      )}
      <p className="links">
        <Link to="/sign-in">Back to sign in</Link>
      </p>
    </AuthFrame>
  );
}
