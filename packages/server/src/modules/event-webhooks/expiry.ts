import { runStatement, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

/** Finished deliveries are kept at most this many (retention) days, fewer when their project keeps its events less. */
export const DELIVERY_RETENTION_DAYS = 30;

/**
 * Retention's expiry of event webhook deliveries (modules/retention decides the cut-off): deletes
 * at most `batch` of the project's finished deliveries (SUCCEEDED or FAILED) made before `before`;
 * answers how many. Deliveries still PENDING or SENDING stay whatever their age (a disabled
 * endpoint's resume when it is enabled again). Each endpoint's deliveries are read through its
 * (endpoint, created_at) index, not by scanning the table.
 */
export function deleteExpiredDeliveries(
  db: Queryable,
  projectId: string,
  before: Date,
  batch: number,
): Promise<number> {
  return runStatement(
    db,
    sql`DELETE FROM webhook_messages WHERE id IN (
          SELECT id FROM webhook_messages
          WHERE endpoint_id = ANY(ARRAY(SELECT id FROM webhook_endpoints WHERE project_id = ${projectId}::uuid))
            AND created_at < ${before}::timestamptz AND status IN ('SUCCEEDED', 'FAILED')
          LIMIT ${batch}::int)`,
  );
}
