import { randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { hashToken } from '../auth/public.js';
import type { AttemptSecrets } from './providers.js';

/** How long a person has between leaving for the provider and coming back. */
export const ATTEMPT_TTL_MINUTES = 10;

export interface Attempt extends AttemptSecrets {
  provider: string;
  nextPath: string;
}

/** Fresh state, nonce and PKCE verifier for one sign-in (not stored yet: see `saveAttempt`). */
export function newAttempt(provider: string, nextPath: string): Attempt {
  return {
    provider,
    nextPath,
    state: randomBytes(32).toString('base64url'),
    nonce: client.randomNonce(),
    codeVerifier: client.randomPKCECodeVerifier(),
  };
}

/** Stores an attempt (its state hashed) until the callback uses it, once, within ten minutes. */
export async function saveAttempt(db: Queryable, attempt: Attempt): Promise<void> {
  await queryRows(
    db,
    sql`INSERT INTO sso_attempts (state_hash, provider, code_verifier, nonce, next_path, expires_at)
        VALUES (${hashToken(attempt.state)}, ${attempt.provider}, ${attempt.codeVerifier}, ${attempt.nonce},
                ${attempt.nextPath}, now() + make_interval(mins => ${ATTEMPT_TTL_MINUTES}))`,
  );
}

/**
 * Uses an attempt up, atomically: a second callback with the same state (a replay) finds nothing,
 * as do unknown, expired and another provider's states.
 */
export async function consumeAttempt(db: Queryable, provider: string, state: string): Promise<Attempt | undefined> {
  const rows = await queryRows<{ code_verifier: string; nonce: string; next_path: string }>(
    db,
    sql`UPDATE sso_attempts SET used_at = now()
        WHERE state_hash = ${hashToken(state)} AND provider = ${provider} AND used_at IS NULL AND expires_at > now()
        RETURNING code_verifier, nonce, next_path`,
  );
  const row = rows[0];
  return row && { provider, state, nonce: row.nonce, codeVerifier: row.code_verifier, nextPath: row.next_path };
}

/** Maintenance: attempts are worth nothing once expired (used ones are kept until then, to refuse replays). */
export async function deleteExpiredAttempts(db: Queryable): Promise<void> {
  await queryRows(db, sql`DELETE FROM sso_attempts WHERE expires_at <= now()`);
}
