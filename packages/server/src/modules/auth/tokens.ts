import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AuthTokenSchema, type TokenPurpose } from './auth-token.entity.js';

/** A random single-use token for a mail link, and the hash that is stored instead of it. */
export function newToken(): { token: string; hash: Buffer } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

export const hashToken = (token: string): Buffer => createHash('sha256').update(token).digest();

/** Stores a new token of `user` for `purpose` (flushed) and returns the text to mail. */
export async function issueToken(
  em: EntityManager,
  userId: string,
  purpose: TokenPurpose,
  ttlMs: number,
): Promise<string> {
  const { token, hash } = newToken();
  em.create(AuthTokenSchema, { tokenHash: hash, userId, purpose, expiresAt: new Date(Date.now() + ttlMs) });
  await em.flush();
  return token;
}

/** Tokens of `user` for `purpose` issued after `since`. */
export async function countTokensSince(em: EntityManager, userId: string, purpose: TokenPurpose, since: Date) {
  return em.count(AuthTokenSchema, { userId, purpose, createdAt: { $gt: since } });
}

/**
 * Marks a token used, once (one conditional UPDATE, so two requests with it cannot both pass), and
 * returns its user's id; undefined when it is expired, used or unknown. Runs in the caller's
 * transaction: a refusal after this rolls the use back.
 */
export async function useToken(em: EntityManager, token: string, purpose: TokenPurpose): Promise<string | undefined> {
  const tokenHash = hashToken(token);
  const now = new Date();
  const used = await em.nativeUpdate(
    AuthTokenSchema,
    { tokenHash, purpose, usedAt: null, expiresAt: { $gt: now } },
    { usedAt: now },
  );
  return used === 1 ? (await em.findOne(AuthTokenSchema, { tokenHash }))?.userId : undefined;
}
