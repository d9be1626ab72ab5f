import { CLEANUP_BATCH } from '../../db/batched-delete.js';
import { defineJob, noPayload } from '../../jobs/registry.js';
import { foldFinishedHours } from './rollup.js';

const HOUR_MS = 3_600_000;

/**
 * Folds the rollup's per-part rows of every hour that ended more than an hour ago into one row
 * each: the rows a 30-day read sums shrink by up to the number of feed parts (8).
 */
export const foldCountsJob = defineJob({
  name: 'analytics.fold-counts',
  payload: noPayload,
  every: '10 minutes',
  async handler(_payload, { deps, logger }) {
    const before = new Date(Math.floor(deps.clock.now().getTime() / HOUR_MS) * HOUR_MS - HOUR_MS);
    const folded = await foldFinishedHours(deps.db.pool, before, CLEANUP_BATCH);
    if (folded) logger.debug({ folded }, 'analytics counts folded');
  },
});
