import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, signUp, uniqueEmail, waitForMailedToken } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { HttpBrowser, type Visit } from '../../../test/http-browser.js';
import { type ProviderAccount, startOidcProvider, type TestOidcProvider } from '../../../test/oidc-provider.js';
import { onFreePort } from '../../../test/ports.js';
import { queryRows, sql } from '../../db/query.js';

let pigeon: TestPigeon;
let provider: TestOidcProvider;
const people: Record<string, ProviderAccount> = {};

beforeAll(async () => {
  // PUBLIC_URL names the port before Pigeon listens on it: another port if it was taken meanwhile.
  ({ provider, pigeon } = await onFreePort(async (port) => {
    const publicUrl = `http://localhost:${port}`; // what pigeon.url says: the browser stays on one origin
    const oidc = await startOidcProvider({ redirectUri: `${publicUrl}/auth/oauth/oidc/callback`, accounts: people });
    try {
      const started = await startTestPigeon({
        env: {
          PORT: String(port),
          PUBLIC_URL: publicUrl,
          OIDC_ISSUER_URL: oidc.issuer,
          OIDC_CLIENT_ID: oidc.clientId,
          OIDC_CLIENT_SECRET: oidc.clientSecret,
          OIDC_DISPLAY_NAME: 'Company login',
          SSO_ALLOWED_EMAIL_DOMAINS: 'example.com, example.org',
        },
      });
      return { provider: oidc, pigeon: started };
    } catch (err) {
      await oidc.stop();
      throw err;
    }
  }));
});
afterAll(async () => {
  await pigeon?.stop();
  await provider?.stop();
});

/** A person at the provider, under a fresh login name. */
function person(email: string, emailVerified = true): string {
  const login = `login-${Object.keys(people).length + 1}`;
  people[login] = { email, emailVerified };
  return login;
}

/**
 * The whole browser flow: Pigeon's start URL, the provider's login form, its consent form, the
 * callback, and on to `next`. `stopBefore` ends it before a URL (to tamper with the callback).
 */
async function signIn(browser: HttpBrowser, login: string, next = '/users/@me', stopBefore?: (url: URL) => boolean) {
  const loginPage = await browser.visit(`${pigeon.url}/auth/oauth/oidc/start?next=${encodeURIComponent(next)}`);
  expect(loginPage.url).toMatch(new RegExp(`^${provider.issuer}/interaction/`));
  lastAuthorizeUrl = new URL(loginPage.chain.find((c) => c.url.startsWith(`${provider.issuer}/auth?`))?.url ?? '');
  expect(loginPage.text).toMatch(/Sign-in/i);
  const consentPage = await browser.submitForm(loginPage, { login, password: 'any password' });
  expect(consentPage.url).toMatch(new RegExp(`^${provider.issuer}/interaction/`));
  expect(consentPage.text).toMatch(/Authorize/i);
  return browser.submitForm(consentPage, {}, { stopBefore });
}

let lastAuthorizeUrl: URL | undefined;
const isCallback = (url: URL) => url.pathname === '/auth/oauth/oidc/callback';

async function count(table: 'users' | 'user_identities' | 'sso_attempts'): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    pigeon.deps.db.pool,
    sql`SELECT count(*)::int AS n FROM ${table === 'users' ? sql`users` : table === 'user_identities' ? sql`user_identities` : sql`sso_attempts`}`,
  );
  return row?.n ?? 0;
}

/** A refusal: a page with the status, no session cookie, and no account or link written. */
async function expectRefusedPage(
  visit: Visit,
  status: number,
  message: RegExp,
  before: { users: number; links: number },
) {
  expect(visit.status).toBe(status);
  expect(visit.headers.get('content-type')).toMatch(/text\/html/);
  expect(visit.text).toMatch(message);
  expect(visit.setCookies.get('pigeon_session') ?? '').toBe('');
  expect(await count('users')).toBe(before.users);
  expect(await count('user_identities')).toBe(before.links);
}

/** A password account whose address was confirmed with the mailed token. */
async function verifiedAccount(email: string, password: string) {
  const account = await signUp(pigeon, email, password);
  const token = await waitForMailedToken(pigeon, email, 'Confirm your email address');
  expect((await api(pigeon).auth.verifyEmail({ body: { token } })).status).toBe(200);
  return account;
}

const snapshot = async () => ({ users: await count('users'), links: await count('user_identities') });

describe('GET /auth/oauth-config', () => {
  it('lists the configured provider with the URL that starts its sign-in (wire shape of the spec)', async () => {
    const res = await api(pigeon).auth.oauthConfig();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      providers: [{ id: 'oidc', name: 'Company login', authorizeUrl: `${pigeon.url}/auth/oauth/oidc/start` }],
    });
  });
});

describe('sign-in through a real OpenID Connect provider', () => {
  it("offers the provider on Pigeon's sign-in page, keeping where to go next", async () => {
    const page = await new HttpBrowser().visit(`${pigeon.url}/login?next=/outbox`);
    expect(page.status).toBe(200);
    const link = /<a class="button secondary" href="([^"]+)">Sign in with Company login<\/a>/.exec(page.text);
    expect(link?.[1]?.replace(/&#x2F;|&#47;/g, '/').replace(/&amp;/g, '&')).toBe(
      `${pigeon.url}/auth/oauth/oidc/start?next=%2Foutbox`,
    );
  });

  it('links an existing password account by its verified email; same session cookie as a password sign-in', async () => {
    const email = uniqueEmail('linked');
    const account = await verifiedAccount(email, 'my own password 1');
    const browser = new HttpBrowser();
    const landed = await signIn(browser, person(email.toUpperCase()));

    // The provider's authorization request carried PKCE (S256), state and nonce.
    const authorize = lastAuthorizeUrl ?? new URL('about:blank');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(authorize.searchParams.get('state')).toMatch(/^[\w-]{43}$/);
    expect(authorize.searchParams.get('nonce')).toMatch(/^[\w-]{43}$/);
    expect(authorize.searchParams.get('scope')).toBe('openid email profile');

    // Callback → 303 to `next`, which answers with the signed-in user.
    const callback = landed.chain.findIndex((c) => c.url.startsWith(`${pigeon.url}/auth/oauth/oidc/callback`));
    expect(landed.chain[callback]?.status).toBe(303);
    expect(landed.url).toBe(`${pigeon.url}/users/@me`);
    expect(landed.status).toBe(200);
    expect(JSON.parse(landed.text)).toMatchObject({ id: account.user.id, email, emailVerified: true });

    const cookie = `pigeon_session=${browser.cookie(pigeon.url, 'pigeon_session')}`;
    const methods = await api(pigeon, { cookie }).auth.signInMethods();
    expect(methods.status).toBe(200);
    expect(methods.body).toMatchObject({ hasPassword: true, identities: [{ provider: 'oidc', email }] });

    // The password still works, and logout revokes the SSO session like any other.
    const login = await api(pigeon).auth.login({ body: { email, password: 'my own password 1' } });
    expect(login.status).toBe(200);
    await api(pigeon, { cookie, origin: pigeon.url }).auth.logoutPost();
    expectEnvelope(await api(pigeon, { cookie }).users.me(), 401, 'UNAUTHORIZED');
  });

  it('takes over an account whose address was never verified: its password and sessions end', async () => {
    const email = uniqueEmail('squatted');
    const squatter = await signUp(pigeon, email, 'squatters password 1');
    const browser = new HttpBrowser();
    const landed = await signIn(browser, person(email));
    expect(JSON.parse(landed.text)).toMatchObject({ id: squatter.user.id, email, emailVerified: true });
    expectEnvelope(await api(pigeon, { cookie: squatter.cookie }).users.me(), 401, 'UNAUTHORIZED');
    const password = await api(pigeon).auth.login({ body: { email, password: 'squatters password 1' } });
    expectEnvelope(password, 401, 'INVALID_CREDENTIALS');
    const cookie = `pigeon_session=${browser.cookie(pigeon.url, 'pigeon_session')}`;
    const methods = await api(pigeon, { cookie }).auth.signInMethods();
    expect(methods.body).toMatchObject({ hasPassword: false, identities: [{ provider: 'oidc' }] });
  });

  it('sets the session cookie with the attributes and lifetime of a password sign-in', async () => {
    const email = uniqueEmail('cookie');
    await signUp(pigeon, email);
    const browser = new HttpBrowser();
    const done = await signIn(browser, person(email), '/users/@me', (url) => url.pathname === '/users/@me');
    const setCookie = done.headers.getSetCookie().find((c) => c.startsWith('pigeon_session=')) ?? '';
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/Max-Age=604800/);
    expect(setCookie).toMatch(/Path=\//);
  });

  it('signs in again through the linked identity, and sends the browser only to paths of Pigeon', async () => {
    const email = uniqueEmail('again');
    await signUp(pigeon, email);
    const login = person(email);
    await signIn(new HttpBrowser(), login);
    const before = await snapshot();
    for (const next of ['https://evil.example/steal', '//evil.example/steal', '/\\evil.example']) {
      const browser = new HttpBrowser();
      const leavesBoth = (url: URL) => ![pigeon.url, provider.issuer].includes(url.origin) || url.pathname === '/app/';
      const landed = await signIn(browser, login, next, leavesBoth);
      expect(landed.status).toBe(303);
      expect(landed.location).toBe(`${pigeon.url}/app/`);
    }
    expect(await snapshot()).toEqual(before); // no second account, no second link
  });

  it('refuses an address with no account and no invitation (account creation is off by default)', async () => {
    const before = await snapshot();
    const landed = await signIn(new HttpBrowser(), person(uniqueEmail('stranger')));
    await expectRefusedPage(landed, 403, /no Pigeon account/, before);
    expect(landed.text).toMatch(/invite/);
  });

  it('creates a password-less account for an invited address; its last sign-in method cannot be unlinked', async () => {
    const owner = await signUp(pigeon);
    const project = await createProject(pigeon, owner.cookie);
    const email = uniqueEmail('invited');
    const invite = await api(pigeon, { cookie: owner.cookie, origin: pigeon.url }).projects.inviteMember({
      params: { id: project.id },
      body: { email, role: 'MEMBER' },
    });
    expect(invite.status).toBe(201);
    const browser = new HttpBrowser();
    const landed = await signIn(browser, person(email));
    expect(JSON.parse(landed.text)).toMatchObject({ email, emailVerified: true });

    const cookie = `pigeon_session=${browser.cookie(pigeon.url, 'pigeon_session')}`;
    const headers = { cookie, origin: pigeon.url, 'sec-fetch-site': 'same-origin' };
    const methods = await api(pigeon, headers).auth.signInMethods();
    expect(methods.body).toMatchObject({ hasPassword: false, identities: [{ provider: 'oidc', email }] });
    const unlink = await api(pigeon, headers).auth.unlinkIdentity({ params: { provider: 'oidc' } });
    const error = expectEnvelope(unlink, 409, 'CONFLICT');
    expect(error.details).toEqual({ reason: 'LAST_SIGN_IN_METHOD' });
    expect(bodyOf(await api(pigeon, headers).auth.signInMethods(), 200).identities).toHaveLength(1);
    // No password: a password sign-in fails as for any wrong password.
    const password = await api(pigeon).auth.login({ body: { email, password: 'pigeon-timing-equaliser' } });
    expectEnvelope(password, 401, 'INVALID_CREDENTIALS');
  });

  it('unlinks a provider from an account that also has a password; a second unlink is a 404, an unknown provider a 422', async () => {
    const email = uniqueEmail('unlink');
    const account = await verifiedAccount(email, 'my own password 1');
    const browser = new HttpBrowser();
    await signIn(browser, person(email));
    const headers = { cookie: account.cookie, origin: pigeon.url, 'sec-fetch-site': 'same-origin' };
    const unlink = await api(pigeon, headers).auth.unlinkIdentity({ params: { provider: 'oidc' } });
    expect(unlink.status).toBe(200);
    expect(unlink.body).toEqual({ hasPassword: true, identities: [] });
    const again = await api(pigeon, headers).auth.unlinkIdentity({ params: { provider: 'oidc' } });
    expectEnvelope(again, 404, 'NOT_FOUND');
    // untyped: wrong on purpose (a provider not in the enum)
    const other = await pigeon.request('DELETE', '/users/@me/sign-in-methods/saml', { headers }); // not a provider: on purpose
    expectEnvelope(other, 422, 'VALIDATION_ERROR');
  });
});

describe('refusals: a clear page or 4xx, no session, nothing created', () => {
  it('refuses an email the provider has not verified', async () => {
    const email = uniqueEmail('unverified');
    await signUp(pigeon, email); // an account exists: it must not be taken over through an unverified address
    const before = await snapshot();
    const landed = await signIn(new HttpBrowser(), person(email, false));
    await expectRefusedPage(landed, 403, /has not verified the email address/, before);
  });

  it('refuses an email outside the allowed domains, even with an account', async () => {
    const email = `someone-${process.pid}@elsewhere.net`;
    await signUp(pigeon, email);
    const before = await snapshot();
    const landed = await signIn(new HttpBrowser(), person(email));
    await expectRefusedPage(landed, 403, /elsewhere\.net cannot sign in/, before);
    expect(landed.text).toMatch(/example\.com, example\.org/);
  });

  it('refuses a forged state, and a state that does not match the browser', async () => {
    const before = await snapshot();
    const browser = new HttpBrowser();
    const forged = await browser.visit(`${pigeon.url}/auth/oauth/oidc/callback?code=abc&state=forged-state-value`);
    await expectRefusedPage(forged, 400, /not started in this browser, has expired or was already used/, before);
    // A real, unused state from another browser's attempt, with this browser's own state cookie.
    const mine = await browser.visit(`${pigeon.url}/auth/oauth/oidc/start`, { stopBefore: () => true });
    expect(mine.status).toBe(302);
    const other = await new HttpBrowser().visit(`${pigeon.url}/auth/oauth/oidc/start`, { stopBefore: () => true });
    const otherState = new URL(other.location ?? '').searchParams.get('state');
    const crossed = await browser.visit(`${pigeon.url}/auth/oauth/oidc/callback?code=abc&state=${otherState}`);
    await expectRefusedPage(crossed, 400, /not started in this browser/, before);
  });

  it('refuses a replayed callback (the state is single-use)', async () => {
    const email = uniqueEmail('replay');
    await signUp(pigeon, email);
    const browser = new HttpBrowser();
    const atCallback = await signIn(browser, person(email), '/users/@me', isCallback);
    const callbackUrl = atCallback.location ?? '';
    const state = new URL(callbackUrl).searchParams.get('state') ?? '';
    const first = await browser.visit(callbackUrl, { stopBefore: () => true });
    expect(first.status).toBe(303);
    expect(first.setCookies.get('pigeon_session')).toBeTruthy();
    const before = await snapshot();
    const attacker = new HttpBrowser();
    attacker.setCookie(pigeon.url, 'pigeon_sso_state', state, '/auth/oauth');
    const replay = await attacker.visit(callbackUrl, { stopBefore: () => true });
    await expectRefusedPage(replay, 400, /already used/, before);
  });

  it('says so when the person cancels at the provider (access_denied comes back)', async () => {
    const before = await snapshot();
    const browser = new HttpBrowser();
    const loginPage = await browser.visit(`${pigeon.url}/auth/oauth/oidc/start`);
    const cancel = /<a href="([^"]+)">\[ Cancel \]<\/a>/.exec(loginPage.text)?.[1] ?? '';
    expect(cancel).toMatch(/\/abort$/);
    const landed = await browser.visit(new URL(cancel.replace(/&#x2F;/gi, '/'), loginPage.url).href);
    expect(landed.url).toMatch(/\/auth\/oauth\/oidc\/callback\?error=access_denied/);
    await expectRefusedPage(landed, 400, /Company login did not sign you in \(access_denied\)/, before);
    expect(landed.text).toMatch(/End-User aborted interaction/);
  });

  it('answers 502 with a clear page when the provider is down at the callback', async () => {
    const email = uniqueEmail('down');
    await signUp(pigeon, email);
    const browser = new HttpBrowser();
    const atCallback = await signIn(browser, person(email), '/users/@me', isCallback);
    await provider.stop();
    const before = await snapshot();
    const callback = await browser.visit(atCallback.location ?? '', { stopBefore: () => true });
    await expectRefusedPage(callback, 502, /Company login could not be reached/, before);
    expect(callback.text).toMatch(/Try again in a few minutes/);
  });
});
