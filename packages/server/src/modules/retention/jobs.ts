import { ensureHistoryPartitions } from '../../db/partitions.js';
import { defineJob, noPayload } from '../../jobs/registry.js';
import { applyRetention } from './service.js';

/**
 * Keeps the monthly partitions of `events` and `emails` ready for the current month and the
 * three after it. Runs often so that a failed run (its lock timed out behind a long query) is
 * retried long before a month begins; a run with nothing to create is a few catalog reads.
 */
export const historyPartitionsJob = defineJob({
  name: 'history.partitions',
  payload: noPayload,
  every: '1 hour',
  async handler(_payload, { deps, logger }) {
    const created = await ensureHistoryPartitions(deps.db.pool);
    if (created.length) logger.info({ created }, 'history partitions created');
  },
});

/** Applies every project's retention (drops expired partitions, deletes and clears in batches); every RETENTION_INTERVAL_MINUTES. */
export const retentionJob = defineJob({
  name: 'retention.apply',
  payload: noPayload,
  every: (config) => `${config.retention.intervalMinutes} minutes`,
  async handler(_payload, { deps, logger }) {
    const run = await applyRetention(deps.db.pool, { dayMs: deps.config.retention.dayMs, now: deps.clock.now() });
    if (
      run.droppedPartitions.length ||
      run.eventsDeleted ||
      run.emailsDeleted ||
      run.contentCleared ||
      run.executionsExpired ||
      run.deliveriesDeleted
    ) {
      logger.info(run, 'retention applied');
    }
  },
});
