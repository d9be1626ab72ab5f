import { createHash, randomBytes } from 'node:crypto';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, uniqueEmail } from '../../../test/accounts.js';
import { bodyOf, api as client } from '../../../test/api.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { HttpBrowser } from '../../../test/http-browser.js';
import { queryRows, sql } from '../../db/query.js';

/**
 * GitHub (OAuth 2, no ID token) and Google (OpenID Connect) cannot be reached from here: msw
 * answers for github.com and api.github.com as GitHub documents them, and makes Google unreachable.
 */
const CLIENT_ID = 'Iv1.pigeon-test';
const CLIENT_SECRET = 'github-client-secret';
const github = {
  user: { id: 4242, login: 'octo' },
  emails: [] as { email: string; primary: boolean; verified: boolean }[],
  apiDown: false,
  codes: new Map<string, { challenge: string; redirectUri: string }>(),
  tokens: new Set<string>(),
};

const bearer = (request: Request) => github.tokens.has(request.headers.get('authorization')?.slice(7) ?? '');

const api = setupServer(
  // The consent screen, approved: GitHub redirects back with a code.
  http.get('https://github.com/login/oauth/authorize', ({ request }) => {
    const q = new URL(request.url).searchParams;
    if (q.get('client_id') !== CLIENT_ID || q.get('code_challenge_method') !== 'S256') {
      return HttpResponse.text('bad request', { status: 400 });
    }
    const code = randomBytes(10).toString('hex');
    const redirectUri = q.get('redirect_uri') ?? '';
    github.codes.set(code, { challenge: q.get('code_challenge') ?? '', redirectUri });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    back.searchParams.set('state', q.get('state') ?? '');
    return new HttpResponse(null, { status: 302, headers: { location: back.href } });
  }),
  http.post('https://github.com/login/oauth/access_token', async ({ request }) => {
    const form = new URLSearchParams(await request.text());
    const pending = github.codes.get(form.get('code') ?? '');
    github.codes.delete(form.get('code') ?? '');
    const challenge = createHash('sha256')
      .update(form.get('code_verifier') ?? '')
      .digest('base64url');
    if (!pending || pending.challenge !== challenge || form.get('client_secret') !== CLIENT_SECRET) {
      return HttpResponse.json({ error: 'bad_verification_code' }, { status: 400 });
    }
    const token = `gho_${randomBytes(12).toString('hex')}`;
    github.tokens.add(token);
    return HttpResponse.json({ access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
  }),
  http.get('https://api.github.com/user', ({ request }) => {
    if (github.apiDown) return HttpResponse.json({ message: 'Server Error' }, { status: 500 });
    return bearer(request) ? HttpResponse.json(github.user) : HttpResponse.json({}, { status: 401 });
  }),
  http.get('https://api.github.com/user/emails', ({ request }) =>
    bearer(request) ? HttpResponse.json(github.emails) : HttpResponse.json({}, { status: 401 }),
  ),
  http.get('https://accounts.google.com/.well-known/openid-configuration', () => HttpResponse.error()),
);

let pigeon: TestPigeon;
beforeAll(async () => {
  api.listen({ onUnhandledRequest: 'bypass' });
  pigeon = await startTestPigeon({
    env: {
      GITHUB_CLIENT_ID: CLIENT_ID,
      GITHUB_CLIENT_SECRET: CLIENT_SECRET,
      GOOGLE_CLIENT_ID: 'google-client.apps.googleusercontent.com',
      GOOGLE_CLIENT_SECRET: 'google-secret',
    },
  });
});
afterAll(async () => {
  await pigeon?.stop();
  api.close();
});

async function count(table: 'users' | 'sso_attempts'): Promise<number> {
  const from = table === 'users' ? sql`users` : sql`sso_attempts`;
  const [row] = await queryRows<{ n: number }>(pigeon.deps.db.pool, sql`SELECT count(*)::int AS n FROM ${from}`);
  return row?.n ?? 0;
}

async function signInWithGitHub(emails: typeof github.emails) {
  github.emails = emails;
  const browser = new HttpBrowser();
  const atGitHub = await browser.visit(`${pigeon.url}/auth/oauth/github/start?next=/users/@me`, {
    stopBefore: (url) => url.origin === 'https://github.com',
  });
  const authorize = new URL(atGitHub.location ?? '');
  const landed = await browser.visit(authorize.href);
  return { authorize, landed };
}

describe('presets', () => {
  it('lists GitHub and Google in GET /auth/oauth-config', async () => {
    const res = await client(pigeon).auth.oauthConfig();
    expect(res.status).toBe(200);
    expect(bodyOf(res, 200).providers).toEqual([
      { id: 'google', name: 'Google', authorizeUrl: `${pigeon.url}/auth/oauth/google/start` },
      { id: 'github', name: 'GitHub', authorizeUrl: `${pigeon.url}/auth/oauth/github/start` },
    ]);
  });

  it('names them in GET /config too', async () => {
    const res = await client(pigeon).system.config();
    expect(bodyOf(res, 200).oauthProviders).toEqual(['google', 'github']);
  });

  it('answers an unknown provider with a 404 page', async () => {
    const res = await new HttpBrowser().visit(`${pigeon.url}/auth/oauth/oidc/start`);
    expect(res.status).toBe(404);
    expect(res.text).toMatch(/not configured/);
  });
});

describe('GitHub (OAuth 2)', () => {
  it('sends the browser to GitHub with PKCE and state, and signs in to the account of the verified primary email', async () => {
    const email = uniqueEmail('github');
    const account = await signUp(pigeon, email);
    const { authorize, landed } = await signInWithGitHub([
      { email: 'old-unverified@example.net', primary: false, verified: false },
      { email, primary: true, verified: true },
    ]);
    expect(authorize.pathname).toBe('/login/oauth/authorize');
    expect(authorize.searchParams.get('client_id')).toBe(CLIENT_ID);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${pigeon.url}/auth/oauth/github/callback`);
    expect(authorize.searchParams.get('scope')).toBe('read:user user:email');
    expect(authorize.searchParams.get('state')).toMatch(/^[\w-]{43}$/);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.has('nonce')).toBe(false);
    expect(landed.status).toBe(200);
    expect(JSON.parse(landed.text)).toMatchObject({ id: account.user.id, email });
  });

  it('refuses a primary email GitHub has not verified: 403 page, no session', async () => {
    const email = uniqueEmail('github-unverified');
    await signUp(pigeon, email);
    const users = await count('users');
    const { landed } = await signInWithGitHub([{ email, primary: true, verified: false }]);
    expect(landed.status).toBe(403);
    expect(landed.text).toMatch(/GitHub has not verified the email address/);
    expect(landed.setCookies.get('pigeon_session') ?? '').toBe('');
    expect(await count('users')).toBe(users);
  });

  it("answers 502 when GitHub's API fails", async () => {
    github.apiDown = true;
    try {
      const { landed } = await signInWithGitHub([{ email: uniqueEmail('github-down'), primary: true, verified: true }]);
      expect(landed.status).toBe(502);
      expect(landed.text).toMatch(/GitHub could not be reached/);
      expect(landed.setCookies.get('pigeon_session') ?? '').toBe('');
    } finally {
      github.apiDown = false;
    }
  });
});

describe('Google (OpenID Connect preset)', () => {
  it('answers 502 when Google cannot be reached, and stores no sign-in attempt', async () => {
    const attempts = await count('sso_attempts');
    const res = await new HttpBrowser().visit(`${pigeon.url}/auth/oauth/google/start`);
    expect(res.status).toBe(502);
    expect(res.text).toMatch(/Google could not be reached/);
    expect(res.setCookies.has('pigeon_sso_state')).toBe(false);
    expect(await count('sso_attempts')).toBe(attempts);
  });
});
