import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { account } from '../../api';
import { ErrorNote, Field, Form, Notice } from '../../ui/kit';
import { AuthFrame, fragmentParam } from './frame';

export default function ResetPasswordPage() {
  const [token] = useState(() => fragmentParam('token'));
  const [password, setPassword] = useState('');
  const reset = useMutation({ mutationFn: () => account.auth.resetPassword(token, password) });
  if (!token) {
    return (
      <AuthFrame title="Set a new password">
        <Notice tone="warn">This page opens from the link in the reset mail.</Notice>
        <Link to="/forgot-password">Ask for a new link</Link>
      </AuthFrame>
    );
  }
  return (
    <AuthFrame title="Set a new password">
      {reset.isSuccess ? (
        <Notice tone="ok">
          Your password is changed, and every session of the account has ended. <Link to="/sign-in">Sign in</Link>
        </Notice>
      ) : (
        <Form onSubmit={() => reset.mutate()}>
          <ErrorNote error={reset.error} />
          <Field
            label="New password"
            name="password"
            type="password"
            autoComplete="new-password"
            required
            minLength={10}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            error={reset.error}
          />
          <button type="submit" className="primary" disabled={reset.isPending}>
            Set password
          </button>
        </Form>
      )}
    </AuthFrame>
  );
}
