import { isIP } from 'node:net';
import type { AppDeps } from '../../deps.js';
import { findProjectByKey, keyTypeOf } from '../projects/public.js';
import { currentWindow } from '../rate-limits/public.js';
import { SmtpReply } from './replies.js';

const WINDOW_MS = 15 * 60_000;
/** Addresses tracked at most per window: a flood of sources cannot grow the map without bound. */
const MAX_ADDRESSES = 100_000;

/**
 * Failed AUTHs per client address in fixed 15-minute windows. In memory: each API process counts
 * its own (a guess spread over N processes gets N times the tries, still nowhere near a 256-bit key);
 * the point is to make a scanner give up, and to keep its tries from costing a database lookup each.
 */
export function authFailureGuard(perWindow: number) {
  let windowStart = Date.now();
  let failures = new Map<string, number>();
  const current = () => {
    if (Date.now() - windowStart >= WINDOW_MS || failures.size >= MAX_ADDRESSES) {
      windowStart = Date.now();
      failures = new Map();
    }
    return failures;
  };
  return {
    blocked: (address: string) => (current().get(address) ?? 0) >= perWindow,
    failed: (address: string) => {
      const counts = current();
      counts.set(address, (counts.get(address) ?? 0) + 1);
    },
  };
}

/** Who a session authenticated as: the project of the secret key given as the password. */
export interface SubmissionUser {
  projectId: string;
  key: string;
}

/** One answer for a wrong key, a public key and a malformed one: nothing says which part was wrong. */
export const BAD_CREDENTIALS = () => new SmtpReply(535, '5.7.8 Authentication credentials invalid');

/** The project whose secret key `password` is (any username), or undefined. Counts nothing. */
export async function checkCredentials(deps: AppDeps, password: string): Promise<SubmissionUser | undefined> {
  if (keyTypeOf(password) !== 'secret') return undefined;
  const found = await findProjectByKey(deps.db.pool, password, 'secret', 0);
  return found ? { projectId: found.project.id, key: password } : undefined;
}

/**
 * At each MAIL FROM: the key again (a rotation since the AUTH ends the session's right to send),
 * the project's rate limit counted as one request, as `/v1/send`'s key lookup counts it, and a
 * disabled project refused.
 */
export async function admitTransaction(deps: AppDeps, user: SubmissionUser): Promise<void> {
  const limit = deps.config.rateLimitPerMinute;
  const found = await findProjectByKey(deps.db.pool, user.key, 'secret', limit);
  if (!found) throw new SmtpReply(535, '5.7.8 Authentication credentials no longer valid (the key was rotated)');
  if (found.project.disabled) throw new SmtpReply(550, '5.7.1 This project is disabled; it cannot send');
  if (found.hits !== null && found.hits > limit) {
    throw new SmtpReply(
      451,
      `4.7.1 More than ${limit} requests in a minute for this project; try again in ${currentWindow().resetSeconds} s`,
    );
  }
}

/** Loopback (127.0.0.0/8, ::1, and IPv4 loopback mapped into IPv6). */
export function isLoopback(address: string): boolean {
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return address === '::1';
}
