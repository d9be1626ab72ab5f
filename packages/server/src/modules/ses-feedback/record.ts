import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { type DeliveryFeedback, type FeedbackOutcome, recordDeliveryFeedback } from '../deliverability/public.js';
import { firstReceipt } from '../webhook-receipts/public.js';
import type { SesFeedback } from './notification.js';

/**
 * Records one SES notification through the shared feedback path (`recordDeliveryFeedback`): the
 * email's state and its `email.bounce` / `email.complaint` / `email.delivery` event, and for a hard
 * bounce or a complaint the suppression, the contact's unsubscription and the health check — the
 * same as a DSN or ARF report received over SMTP. `snsMessageId` makes it once per SNS message: its
 * receipt is stored in the same transaction. Undefined when no email of ours matches.
 */
export async function recordSesFeedback(
  deps: AppDeps,
  snsMessageId: string,
  feedback: SesFeedback,
): Promise<FeedbackOutcome | undefined> {
  const emailId = await findEmailId(deps.db.pool, feedback);
  if (!emailId) return undefined;
  return recordDeliveryFeedback(deps, emailId, toDeliveryFeedback(feedback), {
    firstSeen: (db) => firstReceipt(db, 'sns', snsMessageId, feedback.kind),
  });
}

/** The email SES's MessageId (stored when SES accepted it) or our own Message-ID names. */
async function findEmailId(db: Queryable, feedback: SesFeedback): Promise<string | undefined> {
  const [row] = await queryRows<{ id: string }>(
    db,
    sql`SELECT id FROM emails WHERE provider_message_id = ${feedback.messageId} OR id = ${feedback.emailId}::uuid LIMIT 1`,
  );
  return row?.id;
}

function toDeliveryFeedback(feedback: SesFeedback): DeliveryFeedback {
  switch (feedback.kind) {
    case 'bounce':
      return { kind: 'bounce', bounceType: feedback.bounce, diagnostic: feedback.diagnostic, source: 'sns' };
    case 'complaint':
      return { kind: 'complaint', feedbackType: feedback.feedbackType, source: 'sns' };
    case 'delivery':
      return { kind: 'delivery', source: 'sns' };
  }
}
