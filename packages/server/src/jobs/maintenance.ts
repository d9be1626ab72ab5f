import { deleteExpiredAttempts } from '../modules/sso/attempts.js';
import { defineJob, noPayload } from './registry.js';

/**
 * Removes expired Idempotency-Key claims, finished rate-limit windows, revocations of expired
 * sessions and expired single sign-on attempts.
 */
export const cleanupJob = defineJob({
  name: 'maintenance.cleanup',
  payload: noPayload,
  every: '10 minutes',
  async handler(_payload, { deps }) {
    const pool = deps.db.pool;
    await pool.query('DELETE FROM idempotency_keys WHERE expires_at <= now()');
    await pool.query('DELETE FROM revoked_sessions WHERE expires_at <= now()');
    await deleteExpiredAttempts(pool);
    await pool.query('DELETE FROM rate_limit_counters WHERE window_start < floor(extract(epoch FROM now()) / 60) - 1');
  },
});
