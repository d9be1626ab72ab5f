import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueEmail } from '../../../test/accounts.js';
import { type ForgedIssuer, type IdTokenFault, startForgedIssuer } from '../../../test/forged-issuer.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { HttpBrowser } from '../../../test/http-browser.js';
import { queryRows, sql } from '../../db/query.js';

/**
 * The ID token checks, against an issuer that gets one thing wrong at a time. Account creation
 * is on here, so a token that passed would create an account: each refusal must leave none.
 */
let pigeon: TestPigeon;
let issuer: ForgedIssuer;

beforeAll(async () => {
  issuer = await startForgedIssuer();
  pigeon = await startTestPigeon({
    env: {
      OIDC_ISSUER_URL: issuer.issuer,
      OIDC_CLIENT_ID: issuer.clientId,
      OIDC_CLIENT_SECRET: issuer.clientSecret,
      SSO_CREATE_ACCOUNTS: 'true',
    },
  });
});
afterAll(async () => {
  await pigeon?.stop();
  await issuer?.stop();
});

async function signInAs(email: string, fault: IdTokenFault) {
  issuer.fault = fault;
  issuer.email = email;
  const browser = new HttpBrowser();
  const landed = await browser.visit(`${pigeon.url}/auth/oauth/oidc/start?next=/users/@me`);
  return { landed, browser };
}

async function accountsFor(email: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    pigeon.deps.db.pool,
    sql`SELECT count(*)::int AS n FROM users WHERE email = ${email}`,
  );
  return row?.n ?? 0;
}

describe('ID token verification', () => {
  it('accepts a correct token: the control for every case below', async () => {
    const email = uniqueEmail('forged-valid');
    const { landed } = await signInAs(email, 'valid');
    expect(landed.status).toBe(200);
    expect(JSON.parse(landed.text)).toMatchObject({ email, emailVerified: true });
    expect(await accountsFor(email)).toBe(1);
  });

  const faults: [IdTokenFault, string][] = [
    ['wrong-nonce', 'a nonce from another sign-in'],
    ['other-audience', 'issued for another client'],
    ['other-key', 'signed with a key the issuer does not publish'],
    ['expired', 'expired an hour ago'],
  ];
  it.each(faults)('refuses a token with %s (%s): 400 page, no session, no account', async (fault) => {
    const email = uniqueEmail(`forged-${fault}`);
    const { landed } = await signInAs(email, fault);
    expect(landed.status).toBe(400);
    expect(landed.url).toMatch(/\/auth\/oauth\/oidc\/callback\?/);
    expect(landed.text).toMatch(/could not be verified/);
    expect(landed.setCookies.get('pigeon_session') ?? '').toBe('');
    expect(await accountsFor(email)).toBe(0);
  });

  it('answers 502 when the token endpoint is down, with no session and no account', async () => {
    const email = uniqueEmail('forged-down');
    const { landed } = await signInAs(email, 'token-endpoint-down');
    expect(landed.status).toBe(502);
    expect(landed.text).toMatch(/could not be reached/);
    expect(landed.setCookies.get('pigeon_session') ?? '').toBe('');
    expect(await accountsFor(email)).toBe(0);
  });

  it('refuses an unverified email even when account creation is on', async () => {
    const email = uniqueEmail('forged-unverified');
    issuer.emailVerified = false;
    try {
      const { landed } = await signInAs(email, 'valid');
      expect(landed.status).toBe(403);
      expect(landed.text).toMatch(/has not verified the email address/);
      expect(await accountsFor(email)).toBe(0);
    } finally {
      issuer.emailVerified = true;
    }
  });
});
