import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { preparedRows, queryRows, runStatement, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import type { SessionUser } from '../../kit/caller.js';
import { AppError, conflict, forbidden, notFound } from '../../kit/errors.js';
import { sendSystemMail } from '../../mail/system-mail.js';
import type { TokenPurpose } from '../auth/public.js';
import {
  assertAcceptablePassword,
  clearAccountFailures,
  clearFailures,
  countTokensSince,
  hashPassword,
  issueToken,
  lockedForSeconds,
  recordFailure,
  useToken,
  verifyPassword,
} from '../auth/public.js';
import { USER_COLUMNS, type User } from './user.js';

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
  const user = await createUser(deps.db.pool, email, password);
  await mailToken(deps, user, 'VERIFY_EMAIL').catch((err) =>
    deps.logger.warn({ err }, 'could not send the verification mail'),
  );
  return user;
}

const emailTaken = () => conflict('An account with this email already exists');

/**
 * Inserts a user; the conflict when the address has an account, also when a concurrent request
 * created it between the check (which spares hashing the password) and the insert.
 */
async function insertUser(
  db: Queryable,
  email: string,
  passwordHash: () => Promise<string | null>,
  emailVerified: boolean,
): Promise<User> {
  if (await findUserByEmail(db, email)) throw emailTaken();
  const [user] = await queryRows<User>(
    db,
    sql`INSERT INTO users (id, email, password_hash, email_verified, session_version, created_at, updated_at)
        VALUES (${uuidv7()}::uuid, ${email}::text, ${await passwordHash()}::text, ${emailVerified}::boolean, 1, now(), now())
        ON CONFLICT (email) DO NOTHING
        RETURNING ${USER_COLUMNS}`,
  );
  if (!user) throw emailTaken();
  return user;
}

export function createUser(db: Queryable, email: string, password: string): Promise<User> {
  return insertUser(db, email, () => hashPassword(password), false);
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

export async function findUserByEmail(db: Queryable, email: string): Promise<User | undefined> {
  const [user] = await queryRows<User>(db, sql`SELECT ${USER_COLUMNS} FROM users WHERE email = ${email}::text`);
  return user;
}

export async function findUserById(db: Queryable, id: string): Promise<User | undefined> {
  const [user] = await queryRows<User>(db, sql`SELECT ${USER_COLUMNS} FROM users WHERE id = ${id}::uuid`);
  return user;
}

/**
 * An account for an address a provider has verified (single sign-on): no password, email verified.
 * A password can be added later through the reset flow.
 */
export function createPasswordlessUser(db: Queryable, email: string): Promise<User> {
  return insertUser(db, email, async () => null, true);
}

/**
 * A provider proved the address belongs to the person signing in. If the account had never proved
 * it, whoever signed up with it may not be that person (an account squatted before its owner
 * arrives): its password is removed and its sessions end, and the address counts as verified.
 */
export async function claimWithVerifiedEmail(db: Queryable, user: User): Promise<void> {
  if (user.emailVerified) return;
  // Only an unverified account is claimed (a concurrent claim bumps the session version once);
  // `user` is brought up to date either way, since a session is started from it.
  const [claimed] = await queryRows<User>(
    db,
    sql`UPDATE users SET email_verified = true, password_hash = NULL, session_version = session_version + 1, updated_at = now()
        WHERE id = ${user.id}::uuid AND NOT email_verified
        RETURNING ${USER_COLUMNS}`,
  );
  const current = claimed ?? (await findUserById(db, user.id));
  if (current) Object.assign(user, current);
}

const tooManyAttempts = (message: string, seconds: number) =>
  new AppError('too-many', 'TOO_MANY_ATTEMPTS', message, { details: { retryAfterSeconds: seconds } });

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
  const user = await findUserByEmail(db, email);
  if (!(await verifyPassword(user?.passwordHash, password)) || !user) {
    await recordFailure(db, 'account-ip', accountIp);
    await recordFailure(db, 'ip', ip);
    throw new AppError('unauthenticated', 'INVALID_CREDENTIALS', 'Email or password is wrong');
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
  const token = await issueToken(deps.db.pool, user.id, purpose, TOKEN_TTL_MS[purpose]);
  const base = deps.config.http.publicUrl;
  const [subject, lines] =
    purpose === 'VERIFY_EMAIL'
      ? [
          'Confirm your email address',
          [
            'Confirm the email address of your Pigeon account: open this page and press the button (it works once, for 48 hours):',
            `${base}/app/verify-email#token=${token}`,
            '',
            `From a program instead: POST ${base}/auth/verify-email with the body {"token": "<the token>"}.`,
          ],
        ]
      : [
          'Reset your Pigeon password',
          [
            'Someone asked to reset the password of your Pigeon account. If it was you, choose a new one here',
            '(the link works once, for an hour; if it was not you, ignore this mail):',
            `${base}/app/reset-password#token=${token}`,
            '',
            `From a program instead: POST ${base}/auth/reset-password ({"token": "<the token>", "password": "<new password>"}).`,
          ],
        ];
  await sendSystemMail(deps, user.email, subject, [...lines, `Token: ${token}`]);
}

export async function requestVerification(deps: AppDeps, userId: string): Promise<void> {
  const user = await findUserById(deps.db.pool, userId);
  if (!user) throw notFound('User');
  await mailToken(deps, user, 'VERIFY_EMAIL');
}

/** One reset mail per address in this window, however often it is asked for. */
export const RESET_MAIL_INTERVAL_MS = 5 * 60_000;

/** Mails a reset token unless the address has no account or got one within the last 5 minutes. */
export async function requestPasswordReset(deps: AppDeps, email: string): Promise<void> {
  const db = deps.db.pool;
  const user = await findUserByEmail(db, email);
  if (!user) return;
  if (await countTokensSince(db, user.id, 'RESET_PASSWORD', RESET_MAIL_INTERVAL_MS)) return;
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
async function consumeToken(db: Queryable, token: string, purpose: TokenPurpose): Promise<User> {
  const userId = await useToken(db, token, purpose);
  const user = userId ? await findUserById(db, userId) : undefined;
  if (!user) throw invalidToken();
  return user;
}

const invalidToken = () => new AppError('invalid', 'INVALID_TOKEN', 'This link is invalid, expired or already used');

export async function verifyEmail(pool: pg.Pool, token: string): Promise<User> {
  return inTransaction(pool, async (client) => {
    const { id } = await consumeToken(client, token, 'VERIFY_EMAIL');
    const [user] = await queryRows<User>(
      client,
      sql`UPDATE users
          SET email_verified = true, updated_at = CASE WHEN email_verified THEN updated_at ELSE now() END
          WHERE id = ${id}::uuid
          RETURNING ${USER_COLUMNS}`,
    );
    if (!user) throw invalidToken(); // deleted since consumeToken read it
    return user;
  });
}

/** Sets the new password and ends every existing session of the user. */
export async function resetPassword(deps: AppDeps, token: string, password: string): Promise<void> {
  const passwordHash = await hashPassword(password);
  const email = await inTransaction(deps.db.pool, async (client) => {
    const user = await consumeToken(client, token, 'RESET_PASSWORD');
    await assertAcceptablePassword(password, user.email); // throws before the commit: the token stays usable
    await runStatement(
      client,
      sql`UPDATE users SET password_hash = ${passwordHash}::text, session_version = session_version + 1, updated_at = now()
          WHERE id = ${user.id}::uuid`,
    );
    return user.email;
  });
  await clearAccountFailures(deps.db.pool, email);
}
