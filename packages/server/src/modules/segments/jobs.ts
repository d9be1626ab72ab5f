import { defineJob, noPayload } from '../../jobs/registry.js';
import { recountStale, sweepClockSegments } from './service.js';

/**
 * Once a minute: tracked segments whose conditions move with the clock are recomputed (entry and
 * exit events for what time changed), and stale cached counts of untracked segments recounted.
 */
export const segmentsSweepJob = defineJob({
  name: 'segments.sweep',
  payload: noPayload,
  every: '1 minute',
  lockLifetimeMs: 10 * 60_000,
  async handler(_payload, { deps, logger }) {
    const swept = await sweepClockSegments(deps.db.pool, deps.config.segments);
    const recounted = await recountStale(deps.db.pool, deps.config.segments);
    if (swept || recounted) logger.info({ swept, recounted }, 'segments swept');
  },
});
