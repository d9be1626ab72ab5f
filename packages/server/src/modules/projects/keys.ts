import { createHash, randomBytes } from 'node:crypto';

import type { KeyType } from '../../kit/caller.js';

export type { KeyType };

/** sha256 of a key: what the database indexes and looks keys up by. */
export const hashKey = (key: string): Buffer => createHash('sha256').update(key).digest();

export function keyTypeOf(key: string): KeyType | undefined {
  if (/^pk_[0-9a-f]{64}$/.test(key)) return 'public';
  if (/^sk_[0-9a-f]{64}$/.test(key)) return 'secret';
  return undefined;
}

/** A fresh key pair: `pk_`/`sk_` + 64 hex characters from 32 random bytes each. */
export function generateKeyPair() {
  const publicKey = `pk_${randomBytes(32).toString('hex')}`;
  const secretKey = `sk_${randomBytes(32).toString('hex')}`;
  return { publicKey, secretKey, publicKeyHash: hashKey(publicKey), secretKeyHash: hashKey(secretKey) };
}
