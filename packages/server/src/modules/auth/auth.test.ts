import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailedToken, sessionCookie, signUp, uniqueEmail, waitForMailedToken } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { type SmtpSink, startSmtpSink } from '../../../test/smtp-sink.js';
import { queryRows, sql } from '../../db/query.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

const RESET_SUBJECT = 'Reset your Pigeon password';

describe('signup and sessions', () => {
  it('signs up, sets an httpOnly SameSite=Lax cookie with a 7-day lifetime, and knows the user', async () => {
    const email = uniqueEmail();
    const res = await api(pigeon).auth.signup({ body: { email: ` ${email.toUpperCase()} `, password: 'long enough' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ email, emailVerified: false });
    const setCookie = res.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/Max-Age=604800/);
    expect(setCookie).not.toMatch(/Secure/i); // PUBLIC_URL is http here
    const me = await api(pigeon, { cookie: sessionCookie(res) }).users.me();
    expect(me.status).toBe(200);
    expect(bodyOf(me, 200).email).toBe(email);
  });

  it('refuses a second account for the same address with 409', async () => {
    const email = uniqueEmail();
    await signUp(pigeon, email);
    const res = await api(pigeon).auth.signup({ body: { email, password: 'another one' } });
    expectEnvelope(res, 409, 'CONFLICT');
  });

  it('validates signup input with field errors', async () => {
    // Both fields bad on purpose.
    const res = await api(pigeon).auth.signup({ body: { email: 'nope', password: 'short' } });
    const error = expectEnvelope(res, 422, 'VALIDATION_ERROR');
    expect(error.errors?.map((e) => e.field).sort()).toEqual(['email', 'password']);
  });

  it('rejects requests without a session or with a forged one', async () => {
    expectEnvelope(await api(pigeon).users.me(), 401, 'UNAUTHORIZED');
    const forged = await api(pigeon, {
      cookie: 'pigeon_session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4Iiwic3YiOjF9.c2lnbmF0dXJl',
    }).users.me();
    expectEnvelope(forged, 401, 'UNAUTHORIZED');
  });

  it('logs in, and logout clears the cookie', async () => {
    const email = uniqueEmail();
    await signUp(pigeon, email, 'my password 1');
    const login = await api(pigeon).auth.login({ body: { email, password: 'my password 1' } });
    expect(login.status).toBe(200);
    expect((await api(pigeon, { cookie: sessionCookie(login) }).users.me()).status).toBe(200);
    const logout = await api(pigeon).auth.logout();
    expect(logout.headers.get('set-cookie')).toMatch(/pigeon_session=;.*Expires=Thu, 01 Jan 1970/);
  });

  it('POST /auth/logout revokes the session server-side: a copy of the cookie stops working, other sessions go on', async () => {
    const email = uniqueEmail();
    await signUp(pigeon, email, 'my password 1');
    const login = async () =>
      sessionCookie(await api(pigeon).auth.login({ body: { email, password: 'my password 1' } }));
    const laptop = await login();
    const phone = await login();
    const logout = await api(pigeon, { cookie: laptop }).auth.logoutPost();
    expect(logout.status).toBe(200);
    expect(logout.headers.get('set-cookie')).toMatch(/pigeon_session=;/);
    expectEnvelope(await api(pigeon, { cookie: laptop }).users.me(), 401, 'UNAUTHORIZED');
    expect((await api(pigeon, { cookie: phone }).users.me()).status).toBe(200);
    // The spec's GET /auth/logout ends the session the same way.
    await api(pigeon, { cookie: phone }).auth.logout();
    expectEnvelope(await api(pigeon, { cookie: phone }).users.me(), 401, 'UNAUTHORIZED');
  });

  it('refuses passwords shorter than 10 characters, common ones and the email address itself', async () => {
    // A local part of at least 10 characters whatever the pid, so it is refused as the address, not as too short.
    const email = uniqueEmail('password-owner');
    const attempts: Array<[string, string]> = [
      ['nine char', 'too_small'],
      ['password123', 'weak_password'],
      ['QWERTYUIOP', 'weak_password'],
      [email, 'weak_password'],
      [email.split('@')[0] ?? '', 'weak_password'],
    ];
    for (const [password, code] of attempts) {
      const res = await api(pigeon).auth.signup({ body: { email, password } });
      const error = expectEnvelope(res, 422, 'VALIDATION_ERROR');
      expect(error.errors?.[0], password).toMatchObject({ field: 'password', code });
    }
    expect((await api(pigeon).auth.signup({ body: { email, password: 'ten chars!' } })).status).toBe(201);
    const requested = await api(pigeon).auth.requestPasswordReset({ body: { email } });
    expect(requested.status).toBe(202);
    const token = await waitForMailedToken(pigeon, email, RESET_SUBJECT);
    const weak = await api(pigeon).auth.resetPassword({ body: { token, password: '1234567890' } });
    expect(expectEnvelope(weak, 422, 'VALIDATION_ERROR').errors?.[0]?.code).toBe('weak_password');
    // The refused reset did not use up the token.
    expect((await api(pigeon).auth.resetPassword({ body: { token, password: 'a better one' } })).status).toBe(200);
  });

  it('does not say whether the address exists, and locks an address after repeated failures from one IP only', async () => {
    const email = uniqueEmail();
    await signUp(pigeon, email, 'the right one');
    // Pigeon trusts X-Forwarded-For from loopback (a reverse proxy): each test IP is its own client.
    const from = (ip: string) => api(pigeon, { 'x-forwarded-for': ip }).auth;
    const login = (password: string, ip: string) => from(ip).login({ body: { email, password } });
    const unknown = await from('198.51.100.7').login({ body: { email: uniqueEmail(), password: 'whatever' } });
    const wrong = await login('the wrong one', '198.51.100.7');
    expect(expectEnvelope(unknown, 401, 'INVALID_CREDENTIALS').message).toBe(
      expectEnvelope(wrong, 401, 'INVALID_CREDENTIALS').message,
    );
    for (let i = 0; i < 4; i++) await login('the wrong one', '198.51.100.7');
    // The attacker's IP is locked out of this address, even with the right password…
    const locked = await login('the right one', '198.51.100.7');
    const error = expectEnvelope(locked, 429, 'TOO_MANY_ATTEMPTS');
    expect(error.details?.retryAfterSeconds).toBeGreaterThan(0);
    // …the owner, from their own IP, is not; and the attacker's IP can still try other addresses.
    expect((await login('the right one', '203.0.113.20')).status).toBe(200);
    const other = uniqueEmail();
    await signUp(pigeon, other, 'the right one');
    const otherLogin = await from('198.51.100.7').login({ body: { email: other, password: 'the right one' } });
    expect(otherLogin.status).toBe(200);
  });

  it('locks an IP after 50 failures over any addresses', async () => {
    const ip = '198.51.100.50';
    for (let i = 0; i < 50; i++) {
      const res = await api(pigeon, { 'x-forwarded-for': ip }).auth.login({
        body: { email: uniqueEmail('guess'), password: 'whatever it is' },
      });
      expect(res.status).toBe(401);
    }
    const email = uniqueEmail();
    await signUp(pigeon, email, 'the right one');
    const login = (from: string) =>
      api(pigeon, { 'x-forwarded-for': from }).auth.login({ body: { email, password: 'the right one' } });
    expectEnvelope(await login(ip), 429, 'TOO_MANY_ATTEMPTS');
    expect((await login('203.0.113.21')).status).toBe(200);
  });

  it('answers 409, never 500, to six sign-ups for one address at once; one account is made', async () => {
    const email = uniqueEmail('race');
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => api(pigeon).auth.signup({ body: { email, password: 'correct horse battery' } })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409)) {
      expect(expectEnvelope(a, 409, 'CONFLICT').message).toBe('An account with this email already exists');
    }
    const rows = await queryRows(pigeon.deps.db.pool, sql`SELECT count(*)::int AS n FROM users WHERE email = ${email}`);
    expect(rows[0]?.n).toBe(1);
  });

  it('lists no OAuth providers when none are configured', async () => {
    const res = await api(pigeon).auth.oauthConfig();
    expect(res.body).toEqual({ providers: [] });
  });
});

describe('mailed tokens', () => {
  it('verifies the email with the mailed token, once', async () => {
    const { user } = await signUp(pigeon);
    const token = mailedToken(pigeon, user.email);
    const verified = bodyOf(await api(pigeon).auth.verifyEmail({ body: { token } }), 200);
    expect(verified.emailVerified).toBe(true);
    expectEnvelope(await api(pigeon).auth.verifyEmail({ body: { token } }), 400, 'INVALID_TOKEN');
  });

  it('resets the password with a single-use token and ends existing sessions', async () => {
    const email = uniqueEmail();
    const { cookie } = await signUp(pigeon, email, 'old password');
    const requested = await api(pigeon).auth.requestPasswordReset({ body: { email } });
    expect(requested.status).toBe(202);
    const token = await waitForMailedToken(pigeon, email, RESET_SUBJECT);
    const reset = await api(pigeon).auth.resetPassword({ body: { token, password: 'new password' } });
    expect(reset.status).toBe(200);
    expectEnvelope(await api(pigeon, { cookie }).users.me(), 401, 'UNAUTHORIZED');
    expectEnvelope(
      await api(pigeon).auth.login({ body: { email, password: 'old password' } }),
      401,
      'INVALID_CREDENTIALS',
    );
    expect((await api(pigeon).auth.login({ body: { email, password: 'new password' } })).status).toBe(200);
    const again = await api(pigeon).auth.resetPassword({ body: { token, password: 'third password' } });
    expectEnvelope(again, 400, 'INVALID_TOKEN');
  });

  it('accepts 10 reset requests per IP within 15 minutes, then answers 429 to that IP only', async () => {
    const ask = (ip: string) =>
      api(pigeon, { 'x-forwarded-for': ip }).auth.requestPasswordReset({ body: { email: uniqueEmail('reset') } });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await ask('198.51.100.60')).status);
    expect(statuses).toEqual([...Array(10).fill(202), 429, 429]);
    const refused = expectEnvelope(await ask('198.51.100.60'), 429, 'TOO_MANY_ATTEMPTS');
    expect(refused.details?.retryAfterSeconds).toBeGreaterThan(0);
    expect((await ask('198.51.100.61')).status).toBe(202);
  });

  it("lifts an address's sign-in locks when its password is reset", async () => {
    const email = uniqueEmail();
    await signUp(pigeon, email, 'old password');
    const from = { 'x-forwarded-for': '198.51.100.70' };
    for (let i = 0; i < 5; i++) await api(pigeon, from).auth.login({ body: { email, password: 'wrong guess' } });
    const login = () => api(pigeon, from).auth.login({ body: { email, password: 'brand new password' } });
    expectEnvelope(await login(), 429, 'TOO_MANY_ATTEMPTS');
    await api(pigeon).auth.requestPasswordReset({ body: { email } });
    const token = await waitForMailedToken(pigeon, email, RESET_SUBJECT);
    const reset = await api(pigeon).auth.resetPassword({ body: { token, password: 'brand new password' } });
    expect(reset.status).toBe(200);
    expect((await login()).status).toBe(200);
  });

  it('answers a reset request for an unknown address the same way, and mails nothing', async () => {
    const email = uniqueEmail();
    const res = await api(pigeon).auth.requestPasswordReset({ body: { email } });
    expect(res.status).toBe(202);
    await new Promise((r) => setTimeout(r, 300));
    expect(() => mailedToken(pigeon, email)).toThrow();
  });
});

describe('password reset mail', () => {
  let slow: TestPigeon;
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink({ delayMs: 1_500 }); // a slow mail server: mailing on the request's path shows
    slow = await startTestPigeon({ env: { SMTP_URL: sink.url } });
  });
  afterAll(async () => {
    await slow?.stop();
    await sink?.close();
  });

  it('answers as fast for an address with an account as without one (the mail goes out after)', async () => {
    const { user } = await signUp(slow);
    await sink.waitFor(1, 10_000); // the signup's verification mail
    const timed = async (email: string) => {
      const started = performance.now();
      const res = await api(slow).auth.requestPasswordReset({ body: { email } });
      expect(res.status).toBe(202);
      return performance.now() - started;
    };
    expect(await timed(user.email)).toBeLessThan(1_000);
    expect(await timed(uniqueEmail('nobody'))).toBeLessThan(1_000);
    await sink.waitFor(2, 10_000);
  });

  it('mails one reset per address per few minutes, however often it is asked', async () => {
    const { user } = await signUp(slow);
    const before = sink.messages.filter((m) => m.to.includes(user.email)).length;
    for (let i = 0; i < 4; i++) {
      await api(slow).auth.requestPasswordReset({ body: { email: user.email } });
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 2_500));
    const resets = sink.messages.filter((m) => m.to.includes(user.email)).length - before;
    expect(resets).toBe(1);
  });
});

describe('deployment settings', () => {
  it('refuses signups when DISABLE_SIGNUPS is set, and says so in /config', async () => {
    const closed = await startTestPigeon({ env: { DISABLE_SIGNUPS: 'true' } });
    try {
      const res = await api(closed).auth.signup({ body: { email: uniqueEmail(), password: 'long enough' } });
      expectEnvelope(res, 403, 'SIGNUPS_DISABLED');
      const config = await api(closed).system.config();
      expect(config.body).toMatchObject({ signupsEnabled: false, oauthProviders: [], mailTransport: 'outbox' });
    } finally {
      await closed.stop();
    }
  });
});
