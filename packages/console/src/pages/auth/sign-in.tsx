import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { account } from '../../api';
import { EmailField, ErrorNote, Field, Form } from '../../ui/kit';
import { AuthFrame, safeNext } from './frame';

export default function SignInPage() {
  const [params] = useSearchParams();
  const next = safeNext(params.get('next'));
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const providers = useQuery({ queryKey: ['oauth-config'], queryFn: () => account.auth.oauthConfig() });
  const config = useQuery({ queryKey: ['config'], queryFn: () => account.system.config() });
  const login = useMutation({
    mutationFn: () => account.auth.login({ email, password }),
    onSuccess: (user) => {
      queryClient.setQueryData(['me'], user);
      queryClient.invalidateQueries({ queryKey: ['projects'] });
      navigate(next, { replace: true });
    },
  });
  return (
    <AuthFrame title="Sign in">
      <Form onSubmit={() => login.mutate()}>
        <ErrorNote error={login.error} />
        <EmailField value={email} onChange={setEmail} error={login.error} account />
        <Field
          label="Password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={login.error}
        />
        <button type="submit" className="primary" disabled={login.isPending}>
          {login.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </Form>
      {providers.data?.providers.length ? (
        <div className="sso">
          <p className="muted">Or sign in with</p>
          {providers.data.providers.map((p) => {
            const url = new URL(p.authorizeUrl);
            url.searchParams.set('next', `/app${next === '/' ? '/' : next}`);
            return (
              <a key={p.id} className="button" href={url.toString()}>
                {p.name}
              </a>
            );
          })}
        </div>
      ) : null}
      <p className="links">
        <Link to="/forgot-password">Forgot your password?</Link>
        {config.data?.signupsEnabled ? (
          <Link to={`/sign-up?next=${encodeURIComponent(next)}`}>Create an account</Link>
        ) : null}
      </p>
    </AuthFrame>
  );
}
