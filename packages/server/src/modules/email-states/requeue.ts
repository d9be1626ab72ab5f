import { queryRows, raw, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { NOTIFY_CHANNEL } from './queue.js';
import { REQUEUED_PAYLOAD } from './queue-window.js';

export interface RequeueCounts {
  requeued: number;
  refused: { suppressed: number; unsubscribed: number };
}

/**
 * Queues a project's FAILED messages again (all, one campaign's, or one), each with a new lifetime
 * (`requeued_at`) and no attempt used. Refused as sending refuses them, and left FAILED: suppressed
 * addresses, MARKETING mail to unsubscribed contacts (and HEADLESS campaign mail, as campaigns skip
 * them too), and mail of cancelled campaigns. One statement, so a concurrent requeue counts nothing twice.
 * Its NOTIFY says `requeued`: the rows may be older than the delivery workers' queue window.
 */
export async function requeueFailedEmails(
  db: Queryable,
  projectId: string,
  only: { campaignId?: string; emailId?: string } = {},
): Promise<RequeueCounts> {
  const ofCampaign = only.campaignId ? sql`AND e.campaign_id = ${only.campaignId}::uuid` : raw('');
  const ofEmail = only.emailId ? sql`AND e.id = ${only.emailId}::uuid` : raw('');
  const [row] = await queryRows<{ requeued: number; suppressed: number; unsubscribed: number }>(
    db,
    sql`WITH failed AS (
          SELECT e.id, s.reason AS suppression,
                 COALESCE(NOT c.subscribed AND (e.content_type = 'MARKETING'
                   OR (e.campaign_id IS NOT NULL AND e.content_type = 'HEADLESS')), false) AS unsubscribed
          FROM emails e
          LEFT JOIN suppressions s ON s.project_id = e.project_id AND s.email = e.to_email
          LEFT JOIN contacts c ON c.id = e.contact_id
          LEFT JOIN campaigns k ON k.id = e.campaign_id
          WHERE e.project_id = ${projectId}::uuid AND e.status = 'FAILED' ${ofCampaign} ${ofEmail}
            AND k.status IS DISTINCT FROM 'CANCELLED'
          FOR UPDATE OF e
        ), requeued AS (
          UPDATE emails e SET status = 'QUEUED', attempts = 0, next_attempt_at = now(), requeued_at = now(),
                 claimed_at = NULL, updated_at = now()
          FROM failed f WHERE e.id = f.id AND f.suppression IS NULL AND NOT f.unsubscribed
          RETURNING e.id
        ), woken AS (
          SELECT pg_notify(${NOTIFY_CHANNEL}, ${REQUEUED_PAYLOAD}) FROM (SELECT 1 FROM requeued LIMIT 1) x
        )
        SELECT (SELECT count(*) FROM requeued)::int AS requeued, (SELECT count(*) FROM woken)::int AS woken,
               count(*) FILTER (WHERE suppression IS NOT NULL)::int AS suppressed,
               count(*) FILTER (WHERE suppression IS NULL AND unsubscribed)::int AS unsubscribed
        FROM failed`,
  );
  return {
    requeued: row?.requeued ?? 0,
    refused: { suppressed: row?.suppressed ?? 0, unsubscribed: row?.unsubscribed ?? 0 },
  };
}

export const requeueMessage = ({ requeued, refused }: RequeueCounts) =>
  `${requeued} queued again; refused: ${refused.suppressed} suppressed, ${refused.unsubscribed} unsubscribed`;
