import { createHash, randomBytes } from 'node:crypto';
import { queryRows, runStatement, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import type { TokenPurpose } from './auth-token.js';

/** A random single-use token for a mail link, and the hash that is stored instead of it. */
export function newToken(): { token: string; hash: Buffer } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

export const hashToken = (token: string): Buffer => createHash('sha256').update(token).digest();

/**
 * Stores a new token of `user` for `purpose` and returns the text to mail. Its times are the
 * database's, like the checks that read them (`useToken`, `countTokensSince`): an application
 * clock that drifts cannot shorten or stretch a token's life.
 */
export async function issueToken(db: Queryable, userId: string, purpose: TokenPurpose, ttlMs: number): Promise<string> {
  const { token, hash } = newToken();
  await runStatement(
    db,
    sql`INSERT INTO auth_tokens (token_hash, user_id, purpose, expires_at)
        VALUES (${hash}::bytea, ${userId}::uuid, ${purpose}::text, now() + make_interval(secs => ${ttlMs / 1000}))`,
  );
  return token;
}

/** Tokens of `user` for `purpose` issued within the last `withinMs` milliseconds. */
export async function countTokensSince(
  db: Queryable,
  userId: string,
  purpose: TokenPurpose,
  withinMs: number,
): Promise<number> {
  const [row] = await queryRows<{ count: number }>(
    db,
    sql`SELECT count(*)::int AS count FROM auth_tokens
        WHERE user_id = ${userId}::uuid AND purpose = ${purpose}::text AND created_at > now() - make_interval(secs => ${withinMs / 1000})`,
  );
  return row?.count ?? 0;
}

/**
 * Marks a token used, once (one conditional UPDATE, so two requests with it cannot both pass), and
 * returns its user's id; undefined when it is expired, used or unknown. Runs in the caller's
 * transaction: a refusal after this rolls the use back.
 */
export async function useToken(db: Queryable, token: string, purpose: TokenPurpose): Promise<string | undefined> {
  const [row] = await queryRows<{ userId: string }>(
    db,
    sql`UPDATE auth_tokens SET used_at = now()
        WHERE token_hash = ${hashToken(token)}::bytea AND purpose = ${purpose}::text
          AND used_at IS NULL AND expires_at > now()
        RETURNING user_id AS "userId"`,
  );
  return row?.userId;
}
