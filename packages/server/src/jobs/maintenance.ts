import type pg from 'pg';
import { deleteInBatches } from '../db/batched-delete.js';
import { raw } from '../db/query.js';
import { deleteExpiredAttempts } from '../modules/sso/attempts.js';
import { defineJob, noPayload } from './registry.js';

/**
 * Expired Idempotency-Key claims and revocations of expired sessions, removed in statements of at
 * most `batch` rows (by their `expires_at` index): at 2,000 keyed tracks a second a minute's
 * expiries are 120,000 rows, two dozen short statements instead of one long one.
 */
export async function deleteExpiredShortLived(pool: pg.Pool, batch?: number) {
  const keys = await deleteInBatches(pool, raw('idempotency_keys'), raw('expires_at <= now()'), batch);
  const sessions = await deleteInBatches(pool, raw('revoked_sessions'), raw('expires_at <= now()'), batch);
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
    await pool.query('DELETE FROM rate_limit_counters WHERE window_start < floor(extract(epoch FROM now()) / 60) - 1');
  },
});
