import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { account } from '../../api';
import { ErrorNote, Field, Form } from '../../ui/kit';
import { AuthFrame, safeNext } from './frame';

export default function SignUpPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signup = useMutation({
    mutationFn: () => account.auth.signup({ email, password }),
    onSuccess: (user) => {
      queryClient.setQueryData(['me'], user);
      // A first project is created by the console's home page when the account has none.
      navigate(safeNext(params.get('next')), { replace: true });
    },
  });
  return (
    <AuthFrame title="Create an account">
      <Form onSubmit={() => signup.mutate()}>
        <ErrorNote error={signup.error} />
        <Field
          label="Email"
          name="email"
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={signup.error}
        />
        <Field
          label="Password"
          name="password"
          type="password"
          autoComplete="new-password"
          required
          hint="At least 10 characters, not a common password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={signup.error}
        />
        <button type="submit" className="primary" disabled={signup.isPending}>
          Create account
        </button>
      </Form>
      <p className="links">
        <Link to="/sign-in">I have an account</Link>
      </p>
    </AuthFrame>
  );
}
