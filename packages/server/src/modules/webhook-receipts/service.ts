import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

/**
 * The `webhook_receipts` table's one writer: inbound provider notifications (Stripe events, SNS
 * messages) are handled once. Stores the receipt; false when it was stored before (a retried
 * delivery). Call it in the transaction that applies the notification, so both commit together.
 */
export async function firstReceipt(
  db: Queryable,
  provider: 'stripe' | 'sns',
  id: string,
  type: string,
): Promise<boolean> {
  const rows = await queryRows(
    db,
    sql`INSERT INTO webhook_receipts (provider, id, type) VALUES (${provider}, ${id}, ${type})
        ON CONFLICT (provider, id) DO NOTHING RETURNING id`,
  );
  return rows.length > 0;
}
