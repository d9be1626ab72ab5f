import { createHash, randomBytes } from 'node:crypto';

/** A random single-use token for a mail link, and the hash that is stored instead of it. */
export function newToken(): { token: string; hash: Buffer } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

export const hashToken = (token: string): Buffer => createHash('sha256').update(token).digest();
