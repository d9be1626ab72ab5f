import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailedToken, sessionCookie, signUp, uniqueEmail } from '../../../test/accounts.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

describe('signup and sessions', () => {
  it('signs up, sets an httpOnly SameSite=Lax cookie with a 7-day lifetime, and knows the user', async () => {
    const email = uniqueEmail();
    const res = await pigeon.request('POST', '/auth/signup', {
      body: { email: ` ${email.toUpperCase()} `, password: 'long enough' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ email, emailVerified: false });
    const setCookie = res.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/Max-Age=604800/);
    expect(setCookie).not.toMatch(/Secure/i); // PUBLIC_URL is http here
    const me = await pigeon.request('GET', '/users/@me', { headers: { cookie: sessionCookie(res) } });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe(email);
  });

  it('refuses a second account for the same address with 409', async () => {
    const email = uniqueEmail();
    await signUp(pigeon, email);
    const res = await pigeon.request('POST', '/auth/signup', { body: { email, password: 'another one' } });
    expectEnvelope(res, 409, 'CONFLICT');
  });

  it('validates signup input with field errors', async () => {
    const res = await pigeon.request('POST', '/auth/signup', { body: { email: 'nope', password: 'short' } });
    const error = expectEnvelope(res, 422, 'VALIDATION_ERROR');
    expect(error.errors?.map((e) => e.field).sort()).toEqual(['email', 'password']);
  });

  it('rejects requests without a session or with a forged one', async () => {
    expectEnvelope(await pigeon.request('GET', '/users/@me'), 401, 'UNAUTHORIZED');
    const forged = await pigeon.request('GET', '/users/@me', {
      headers: { cookie: 'pigeon_session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4Iiwic3YiOjF9.c2lnbmF0dXJl' },
    });
    expectEnvelope(forged, 401, 'UNAUTHORIZED');
  });

  it('logs in, and logout clears the cookie', async () => {
    const email = uniqueEmail();
    await signUp(pigeon, email, 'my password 1');
    const login = await pigeon.request('POST', '/auth/login', { body: { email, password: 'my password 1' } });
    expect(login.status).toBe(200);
    expect((await pigeon.request('GET', '/users/@me', { headers: { cookie: sessionCookie(login) } })).status).toBe(200);
    const logout = await pigeon.request('GET', '/auth/logout');
    expect(logout.headers.get('set-cookie')).toMatch(/pigeon_session=;.*Expires=Thu, 01 Jan 1970/);
  });

  it('does not say whether the address exists, and locks an address after repeated failures', async () => {
    const email = uniqueEmail();
    await signUp(pigeon, email, 'the right one');
    const unknown = await pigeon.request('POST', '/auth/login', {
      body: { email: uniqueEmail(), password: 'whatever' },
    });
    const wrong = await pigeon.request('POST', '/auth/login', { body: { email, password: 'the wrong one' } });
    expect(expectEnvelope(unknown, 401, 'INVALID_CREDENTIALS').message).toBe(
      expectEnvelope(wrong, 401, 'INVALID_CREDENTIALS').message,
    );
    for (let i = 0; i < 4; i++)
      await pigeon.request('POST', '/auth/login', { body: { email, password: 'the wrong one' } });
    const locked = await pigeon.request('POST', '/auth/login', { body: { email, password: 'the right one' } });
    const error = expectEnvelope(locked, 429, 'TOO_MANY_ATTEMPTS');
    expect(error.details?.retryAfterSeconds).toBeGreaterThan(0);
  });

  it('lists no OAuth providers when none are configured', async () => {
    const res = await pigeon.request('GET', '/auth/oauth-config');
    expect(res.body).toEqual({ providers: [] });
  });
});

describe('mailed tokens', () => {
  it('verifies the email with the mailed token, once', async () => {
    const { user } = await signUp(pigeon);
    const token = mailedToken(pigeon, user.email);
    const verified = await pigeon.request('POST', '/auth/verify-email', { body: { token } });
    expect(verified.status).toBe(200);
    expect(verified.body.emailVerified).toBe(true);
    expectEnvelope(await pigeon.request('POST', '/auth/verify-email', { body: { token } }), 400, 'INVALID_TOKEN');
  });

  it('resets the password with a single-use token and ends existing sessions', async () => {
    const email = uniqueEmail();
    const { cookie } = await signUp(pigeon, email, 'old password');
    const requested = await pigeon.request('POST', '/auth/request-password-reset', { body: { email } });
    expect(requested.status).toBe(202);
    const token = mailedToken(pigeon, email);
    const reset = await pigeon.request('POST', '/auth/reset-password', { body: { token, password: 'new password' } });
    expect(reset.status).toBe(200);
    expectEnvelope(await pigeon.request('GET', '/users/@me', { headers: { cookie } }), 401, 'UNAUTHORIZED');
    expectEnvelope(
      await pigeon.request('POST', '/auth/login', { body: { email, password: 'old password' } }),
      401,
      'INVALID_CREDENTIALS',
    );
    expect((await pigeon.request('POST', '/auth/login', { body: { email, password: 'new password' } })).status).toBe(
      200,
    );
    const again = await pigeon.request('POST', '/auth/reset-password', { body: { token, password: 'third password' } });
    expectEnvelope(again, 400, 'INVALID_TOKEN');
  });

  it('answers a reset request for an unknown address the same way, and mails nothing', async () => {
    const email = uniqueEmail();
    const res = await pigeon.request('POST', '/auth/request-password-reset', { body: { email } });
    expect(res.status).toBe(202);
    expect(() => mailedToken(pigeon, email)).toThrow();
  });
});

describe('deployment settings', () => {
  it('refuses signups when DISABLE_SIGNUPS is set, and says so in /config', async () => {
    const closed = await startTestPigeon({ env: { DISABLE_SIGNUPS: 'true' } });
    try {
      const res = await closed.request('POST', '/auth/signup', {
        body: { email: uniqueEmail(), password: 'long enough' },
      });
      expectEnvelope(res, 403, 'SIGNUPS_DISABLED');
      const config = await closed.request('GET', '/config');
      expect(config.body).toMatchObject({ signupsEnabled: false, oauthProviders: [], mailTransport: 'outbox' });
    } finally {
      await closed.stop();
    }
  });
});
