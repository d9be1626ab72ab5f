import type pg from 'pg';
import { defineJob, noPayload } from '../jobs/registry.js';
import { deleteExpiredRevocations } from '../modules/auth/session.js';
import { deleteExpiredIdempotencyKeys } from '../modules/idempotency/service.js';
import { deleteFinishedWindows } from '../modules/rate-limits/service.js';
import { deleteExpiredAttempts } from '../modules/sso/attempts.js';

/**
 * Expired Idempotency-Key claims and revocations of expired sessions, removed in statements of at
 * most `batch` rows (by their `expires_at` index): at 2,000 keyed tracks a second a minute's
 * expiries are 120,000 rows, two dozen short statements instead of one long one.
 */
export async function deleteExpiredShortLived(pool: pg.Pool, batch?: number) {
  const keys = await deleteExpiredIdempotencyKeys(pool, batch);
  const sessions = await deleteExpiredRevocations(pool, batch);
  return { idempotencyKeys: keys, revokedSessions: sessions };
}

/**
 * Removes expired Idempotency-Key claims, finished rate-limit windows, revocations of expired
 * sessions and expired single sign-on attempts. Every minute, so each run has little to remove.
 */
export const cleanupJob = defineJob({
  name: 'maintenance.cleanup',
  payload: noPayload,
  every: '1 minute',
  async handler(_payload, { deps }) {
    const pool = deps.db.pool;
    await deleteExpiredShortLived(pool);
    await deleteExpiredAttempts(pool);
    await deleteFinishedWindows(pool);
  },
});
