import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { type MailCounts, ratesOf } from '../../kit/mail-rates.js';

export interface Counters extends MailCounts {
  cancelled: number;
  pending: number;
}

export const NO_COUNTS: Counters = {
  sent: 0,
  delivered: 0,
  opened: 0,
  clicked: 0,
  bounced: 0,
  complained: 0,
  unsubscribed: 0,
  cancelled: 0,
  pending: 0,
};

/**
 * Counters of campaigns, counted from their recipients' email rows (and the unsubscribes those
 * emails caused: from all mail, or from the campaign's topic), so they are right whatever ran
 * concurrently: nothing is incremented anywhere.
 */
export async function campaignCounters(
  db: Queryable,
  campaigns: Array<{ id: string; project_id: string }>,
): Promise<Map<string, Counters>> {
  const ids = campaigns.map((c) => c.id);
  const out = new Map<string, Counters>();
  if (ids.length === 0) return out;
  const rows = await queryRows<Omit<Counters, 'unsubscribed'> & { campaign_id: string }>(
    db,
    sql`SELECT campaign_id,
          count(*) FILTER (WHERE sent_at IS NOT NULL)::int AS sent,
          count(*) FILTER (WHERE delivered_at IS NOT NULL)::int AS delivered,
          count(*) FILTER (WHERE opened_at IS NOT NULL)::int AS opened,
          count(*) FILTER (WHERE clicked_at IS NOT NULL)::int AS clicked,
          count(*) FILTER (WHERE status = 'BOUNCED' OR bounced_at IS NOT NULL)::int AS bounced,
          count(*) FILTER (WHERE complained_at IS NOT NULL)::int AS complained,
          count(*) FILTER (WHERE status = 'CANCELLED')::int AS cancelled,
          count(*) FILTER (WHERE status IN ('QUEUED', 'SENDING'))::int AS pending
        FROM emails WHERE campaign_id = ANY(${ids}::uuid[]) GROUP BY campaign_id`,
  );
  for (const { campaign_id, ...counts } of rows) out.set(campaign_id, { ...counts, unsubscribed: 0 });
  const projectId = campaigns[0]?.project_id;
  const unsubscribes = await queryRows<{ campaign_id: string; n: number }>(
    db,
    sql`SELECT e.campaign_id, count(DISTINCT ev.contact_id)::int AS n
        FROM events ev
        JOIN emails e ON e.id = CASE WHEN ev.data ->> 'emailId' ~ '^[0-9a-f-]{36}$' THEN (ev.data ->> 'emailId')::uuid END
        WHERE ev.project_id = ${projectId}::uuid AND ev.name IN ('contact.unsubscribed', 'contact.topic.unsubscribed')
          AND e.campaign_id = ANY(${ids}::uuid[])
        GROUP BY 1`,
  );
  for (const u of unsubscribes) {
    const counts = out.get(u.campaign_id);
    if (counts) counts.unsubscribed = u.n;
  }
  return out;
}

export async function campaignStats(
  db: Queryable,
  campaign: { id: string; project_id: string; total_recipients: number },
) {
  const c = (await campaignCounters(db, [campaign])).get(campaign.id) ?? NO_COUNTS;
  return {
    totalRecipients: campaign.total_recipients,
    ...c,
    rates: ratesOf(c),
  };
}
