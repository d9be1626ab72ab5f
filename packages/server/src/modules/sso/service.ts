import type { Config } from '../../config/index.js';
import type { AppDeps } from '../../deps.js';
import { AppError, forbidden } from '../../kit/errors.js';
import type { User } from '../accounts/public.js';
import * as accounts from '../accounts/public.js';
import { hasPendingInvitation } from '../projects/public.js';
import { type Attempt, consumeAttempt, newAttempt, saveAttempt } from './attempts.js';
import { linkIdentity, signInWithIdentity } from './identities.js';
import { ProviderClient, type ProviderProfile } from './providers.js';

export const startPath = (id: string) => `/auth/oauth/${id}/start`;
export const callbackPath = (id: string) => `/auth/oauth/${id}/callback`;

/** One client per configured provider, made once per app. */
export function createProviderClients(config: Config): Map<string, ProviderClient> {
  return new Map(
    config.sso.providers.map((p) => [
      p.id,
      new ProviderClient(p, () => `${config.http.publicUrl}${callbackPath(p.id)}`),
    ]),
  );
}

/** GET /auth/oauth-config: what is configured, and where each sign-in starts. */
export const oauthConfig = (config: Config) => ({
  providers: config.sso.providers.map((p) => ({
    id: p.id,
    name: p.name,
    authorizeUrl: `${config.http.publicUrl}${startPath(p.id)}`,
  })),
});

/** Where to send the browser: the provider's authorization URL; the attempt is stored once that URL exists. */
export async function startSignIn(deps: AppDeps, client: ProviderClient, nextPath: string) {
  const attempt = newAttempt(client.settings.id, nextPath);
  const url = await client.authorizationUrl(attempt); // discovery first: a provider that is down leaves nothing behind
  await saveAttempt(deps.db.pool, attempt);
  return { url, state: attempt.state };
}

/**
 * The callback's work: the stored attempt of `state` (undefined when it is not the state this
 * browser was given) used up, the provider's verified profile, then the account it signs in to
 * (linked identity, else the account with that verified email, else a new account when allowed),
 * and the path to go on to. Nothing is written before every check has passed.
 */
export async function finishSignIn(
  deps: AppDeps,
  client: ProviderClient,
  input: { callbackUrl: URL; state: string | undefined },
): Promise<{ user: User; nextPath: string }> {
  const attempt = input.state ? await consumeAttempt(deps.db.pool, client.settings.id, input.state) : undefined;
  if (!attempt) {
    throw new AppError(
      'invalid',
      'INVALID_TOKEN',
      'This sign-in was not started in this browser, has expired or was already used',
      {
        suggestion: 'Start the sign-in again from Pigeon.',
      },
    );
  }
  return { user: await signInWith(deps, client, input.callbackUrl, attempt), nextPath: attempt.nextPath };
}

async function signInWith(deps: AppDeps, client: ProviderClient, callbackUrl: URL, attempt: Attempt): Promise<User> {
  const profile = await client.profile(callbackUrl, attempt);
  const email = acceptedEmail(deps.config, client.settings.name, profile);
  const provider = client.settings.id;
  const db = deps.db.pool;
  const linkedUserId = await signInWithIdentity(deps.db.pool, provider, profile.subject, email);
  if (linkedUserId) {
    const user = await accounts.findUserById(db, linkedUserId);
    if (user) return user;
  }
  const user = (await accounts.findUserByEmail(db, email)) ?? (await createAccount(deps, email));
  await linkIdentity(deps.db.pool, user.id, provider, profile.subject, email);
  await accounts.claimWithVerifiedEmail(db, user);
  return user;
}

async function createAccount(deps: AppDeps, email: string): Promise<User> {
  if (!deps.config.sso.createAccounts && !(await hasPendingInvitation(deps.db.pool, email))) {
    throw forbidden(`There is no Pigeon account for ${email}`, 'FORBIDDEN', {
      suggestion: 'Ask an owner of a Pigeon project to invite this address, then sign in again.',
    });
  }
  return accounts.createPasswordlessUser(deps.db.pool, email);
}

/** The profile's email, if the provider verified it and its domain is allowed; otherwise a 403 that says why. */
function acceptedEmail(config: Config, providerName: string, profile: ProviderProfile): string {
  const email = profile.email?.trim().toLowerCase();
  if (!email || !profile.emailVerified) {
    throw forbidden(`${providerName} has not verified the email address of this account`, 'FORBIDDEN', {
      suggestion: `Verify the address at ${providerName}, then sign in again.`,
    });
  }
  const domain = email.slice(email.lastIndexOf('@') + 1);
  const allowed = config.sso.allowedEmailDomains;
  if (allowed.length > 0 && !allowed.includes(domain)) {
    throw forbidden(`Addresses at ${domain} cannot sign in to this Pigeon`, 'FORBIDDEN', {
      suggestion: `Sign in with an address at ${allowed.join(', ')}.`,
    });
  }
  return email;
}
