import type { EntityManager } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import { preparedRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import type { SessionUser } from '../../http/auth.js';
import { AppError, conflict, forbidden } from '../../http/errors.js';
import { sendSystemMail } from '../../mail/system-mail.js';
import type { TokenPurpose } from '../auth/auth-token.entity.js';
import { assertAcceptablePassword, hashPassword, verifyPassword } from '../auth/passwords.js';
import { clearAccountFailures, clearFailures, lockedForSeconds, recordFailure } from '../auth/throttle.js';
import { countTokensSince, issueToken, useToken } from '../auth/tokens.js';
import { type User, UserSchema } from './user.entity.js';

const TOKEN_TTL_MS: Record<TokenPurpose, number> = {
  VERIFY_EMAIL: 48 * 3600_000,
  RESET_PASSWORD: 3600_000,
};

export const toUserDto = (user: { id: string; email: string; emailVerified: boolean; createdAt: Date }) => ({
  id: user.id,
  email: user.email,
  emailVerified: user.emailVerified,
  createdAt: user.createdAt.toISOString(),
});

export async function signup(deps: AppDeps, email: string, password: string): Promise<User> {
  if (deps.config.auth.signupsDisabled) {
    throw forbidden('Signups are disabled on this deployment', 'SIGNUPS_DISABLED', {
      suggestion: 'Ask an owner of a project to invite you.',
    });
  }
  await assertAcceptablePassword(password, email);
  const user = await createUser(deps.db.orm.em.fork(), email, password);
  await mailToken(deps, user, 'VERIFY_EMAIL').catch((err) =>
    deps.logger.warn({ err }, 'could not send the verification mail'),
  );
  return user;
}

export async function createUser(em: EntityManager, email: string, password: string): Promise<User> {
  if (await em.count(UserSchema, { email })) throw conflict('An account with this email already exists');
  const user = em.create(UserSchema, { id: uuidv7(), email, passwordHash: await hashPassword(password) });
  await em.flush();
  return user;
}

/**
 * The user a session names, with the session version it must carry; undefined when the user is
 * gone or the session was revoked (logout). Runs on every dashboard request.
 */
export async function findSessionUser(
  db: Queryable,
  userId: string,
  sessionId: string | null,
): Promise<(SessionUser & { sessionVersion: number }) | undefined> {
  const [row] = await preparedRows<SessionUser & { sessionVersion: number }>(
    db,
    'accounts.session-user',
    sql`SELECT id, email, email_verified AS "emailVerified", created_at AS "createdAt", session_version AS "sessionVersion"
        FROM users WHERE id = ${userId} AND NOT EXISTS (SELECT 1 FROM revoked_sessions WHERE jti = ${sessionId}::uuid)`,
  );
  return row;
}

export const findUserByEmail = (em: EntityManager, email: string) => em.findOne(UserSchema, { email });
export const findUserById = (em: EntityManager, id: string) => em.findOne(UserSchema, { id });

/**
 * An account for an address a provider has verified (single sign-on): no password, email verified.
 * A password can be added later through the reset flow.
 */
export async function createPasswordlessUser(em: EntityManager, email: string): Promise<User> {
  if (await em.count(UserSchema, { email })) throw conflict('An account with this email already exists');
  // MikroORM 6 types a hidden nullable property as non-null (Hidden<string | null> is string & Brand).
  const passwordHash = null as unknown as User['passwordHash'];
  const user = em.create(UserSchema, { id: uuidv7(), email, passwordHash, emailVerified: true });
  await em.flush();
  return user;
}

/**
 * A provider proved the address belongs to the person signing in. If the account had never proved
 * it, whoever signed up with it may not be that person (an account squatted before its owner
 * arrives): its password is removed and its sessions end, and the address counts as verified.
 */
export async function claimWithVerifiedEmail(em: EntityManager, user: User): Promise<void> {
  if (user.emailVerified) return;
  user.emailVerified = true;
  user.passwordHash = null as unknown as User['passwordHash']; // see createPasswordlessUser
  user.sessionVersion += 1;
  await em.flush();
}

const tooManyAttempts = (message: string, seconds: number) =>
  new AppError(429, 'TOO_MANY_ATTEMPTS', message, { details: { retryAfterSeconds: seconds } });

/**
 * Checks the password; failures are counted per address and client IP together, and per client
 * IP, and lock those for a while (see `auth/throttle.ts`): the address stays open from other IPs.
 */
export async function login(deps: AppDeps, email: string, password: string, ip: string): Promise<User> {
  const db = deps.db.pool;
  const accountIp = `${email} ${ip}`;
  const lockedSeconds = await lockedForSeconds(db, [
    ['account-ip', accountIp],
    ['ip', ip],
  ]);
  if (lockedSeconds > 0) throw tooManyAttempts('Too many failed sign-ins; try again later', lockedSeconds);
  const user = await deps.db.orm.em.fork().findOne(UserSchema, { email });
  if (!(await verifyPassword(user?.passwordHash, password)) || !user) {
    await recordFailure(db, 'account-ip', accountIp);
    await recordFailure(db, 'ip', ip);
    throw new AppError(401, 'INVALID_CREDENTIALS', 'Email or password is wrong');
  }
  await clearFailures(db, 'account-ip', accountIp);
  return user;
}

/** Reset requests per client IP: 10 in 15 minutes, then 429 for 15 minutes, whatever the addresses. */
async function countPasswordResetRequest(deps: AppDeps, ip: string): Promise<void> {
  const lockedSeconds = await lockedForSeconds(deps.db.pool, [['reset-ip', ip]]);
  if (lockedSeconds > 0) throw tooManyAttempts('Too many password-reset requests; try again later', lockedSeconds);
  await recordFailure(deps.db.pool, 'reset-ip', ip);
}

async function mailToken(deps: AppDeps, user: User, purpose: TokenPurpose): Promise<void> {
  const token = await issueToken(deps.db.orm.em.fork(), user.id, purpose, TOKEN_TTL_MS[purpose]);
  const base = deps.config.http.publicUrl;
  const [subject, lines] =
    purpose === 'VERIFY_EMAIL'
      ? [
          'Confirm your email address',
          [
            'Confirm the email address of your Pigeon account by sending the token below to',
            `POST ${base}/auth/verify-email with the body {"token": "<the token>"}. It works once, for 48 hours.`,
          ],
        ]
      : [
          'Reset your Pigeon password',
          [
            'Someone asked to reset the password of your Pigeon account. If it was you, send the token below',
            `and your new password to POST ${base}/auth/reset-password ({"token": "<the token>", "password": "<new password>"}).`,
            'The token works once, for an hour. If it was not you, ignore this mail.',
          ],
        ];
  await sendSystemMail(deps, user.email, subject, [...lines, `Token: ${token}`]);
}

export async function requestVerification(deps: AppDeps, userId: string): Promise<void> {
  const user = await deps.db.orm.em.fork().findOneOrFail(UserSchema, { id: userId });
  await mailToken(deps, user, 'VERIFY_EMAIL');
}

/** One reset mail per address in this window, however often it is asked for. */
export const RESET_MAIL_INTERVAL_MS = 5 * 60_000;

/** Mails a reset token unless the address has no account or got one within the last 5 minutes. */
export async function requestPasswordReset(deps: AppDeps, email: string): Promise<void> {
  const em = deps.db.orm.em.fork();
  const user = await em.findOne(UserSchema, { email });
  if (!user) return;
  const since = new Date(Date.now() - RESET_MAIL_INTERVAL_MS);
  if (await countTokensSince(em, user.id, 'RESET_PASSWORD', since)) {
    return;
  }
  await mailToken(deps, user, 'RESET_PASSWORD');
}

/**
 * POST /auth/request-password-reset: counts the request against the client IP (429 past the limit),
 * then answers before any of the work: an address with an account costs the same time as one
 * without (no lookup, no mail on the request's path). A failure is logged, not answered.
 */
export async function acceptPasswordResetRequest(deps: AppDeps, input: { email: string; ip: string }): Promise<void> {
  await countPasswordResetRequest(deps, input.ip);
  requestPasswordReset(deps, input.email).catch((err) =>
    deps.logger.warn({ err }, 'could not send the password reset mail'),
  );
}

/** The user of a token, which is used up (auth's `useToken`); expired, used or unknown → 400. */
async function consumeToken(em: EntityManager, token: string, purpose: TokenPurpose): Promise<User> {
  const userId = await useToken(em, token, purpose);
  const user = userId ? await em.findOne(UserSchema, { id: userId }) : null;
  if (!user) throw new AppError(400, 'INVALID_TOKEN', 'This link is invalid, expired or already used');
  return user;
}

export async function verifyEmail(em: EntityManager, token: string): Promise<User> {
  return em.transactional(async (tx) => {
    const user = await consumeToken(tx, token, 'VERIFY_EMAIL');
    user.emailVerified = true;
    return user;
  });
}

/** Sets the new password and ends every existing session of the user. */
export async function resetPassword(deps: AppDeps, token: string, password: string): Promise<void> {
  const passwordHash = await hashPassword(password);
  const email = await deps.db.orm.em.fork().transactional(async (tx) => {
    const user = await consumeToken(tx, token, 'RESET_PASSWORD');
    await assertAcceptablePassword(password, user.email); // throws before the commit: the token stays usable
    user.passwordHash = passwordHash;
    user.sessionVersion += 1;
    return user.email;
  });
  await clearAccountFailures(deps.db.pool, email);
}
