import type { BillingCategory } from '@pigeon/contract';
import type pg from 'pg';
import { inTransaction } from '../../db/sql.js';
import { refundEmails } from '../billing/public.js';
import { cancelClaimed } from '../email-states/public.js';

/** The allowance each kind of mail was charged to when it was accepted (system mail is not charged). */
const CHARGED_TO: Record<string, BillingCategory> = {
  TRANSACTIONAL: 'transactional',
  CAMPAIGN: 'campaigns',
  CAMPAIGN_TEST: 'campaigns',
  WORKFLOW: 'workflows',
};

/**
 * A claimed email that will not be sent (its campaign cancelled, its address suppressed since):
 * cancelled, and its charge given back, in one transaction, so that a campaign's cancel answer,
 * its stats and the month's usage agree whichever side (the cancel or a worker) cancelled it.
 */
export async function dropClaimed(pool: pg.Pool, id: string, reason: string | null): Promise<void> {
  await inTransaction(pool, async (client) => {
    const charge = await cancelClaimed(client, id, reason);
    const category = charge && CHARGED_TO[charge.source];
    if (charge && category) await refundEmails(client, charge.projectId, category, 1, charge.chargedAt);
  });
}
