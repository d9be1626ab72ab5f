import { queryRows, sql } from '../../db/query.js';
import { defineJob, noPayload } from '../../jobs/registry.js';

/** Finished deliveries (and their attempts) are kept this long, then dropped. */
export const DELIVERY_RETENTION_DAYS = 30;
const BATCH = 5_000;

/** Drops finished event webhook deliveries older than the retention, in bounded batches. */
export const webhookDeliveriesPruneJob = defineJob({
  name: 'webhooks.prune-deliveries',
  payload: noPayload,
  every: '1 hour',
  async handler(_payload, { deps, logger }) {
    let pruned = 0;
    for (;;) {
      const rows = await queryRows<{ n: number }>(
        deps.db.pool,
        sql`WITH gone AS (
              DELETE FROM webhook_messages WHERE id IN (
                SELECT id FROM webhook_messages
                WHERE status IN ('SUCCEEDED', 'FAILED')
                  AND created_at < now() - make_interval(days => ${DELIVERY_RETENTION_DAYS}::int)
                LIMIT ${BATCH}::int)
              RETURNING 1
            ) SELECT count(*)::int AS n FROM gone`,
      );
      const n = rows[0]?.n ?? 0;
      pruned += n;
      if (n < BATCH) break;
    }
    if (pruned) logger.debug({ pruned }, 'event webhook deliveries pruned');
  },
});
