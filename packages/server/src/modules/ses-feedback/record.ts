import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import type { SesFeedback } from './notification.js';

/**
 * TODO(issue 12, at merge): replace with issue 12's shared "record delivery feedback" function, so
 * SES feedback goes through the same suppression path as inbound SMTP feedback (hard bounces and
 * complaints suppress the address). Until then this only records the state and the event.
 *
 * Records one SES notification on the email it is about, as the delivery worker records a
 * bounce (`emails` state and its `email.*` event on the contact in one statement): a hard bounce
 * → BOUNCED + `email.bounce`, a soft one → `email.bounce` only (the message may still arrive),
 * a complaint → COMPLAINED + `email.complaint`, a delivery → DELIVERED (from SENT) + `email.delivery`.
 * Returns whether an email matched.
 */
export async function recordSesFeedback(db: Queryable, feedback: SesFeedback): Promise<boolean> {
  const event = { bounce: 'email.bounce', complaint: 'email.complaint', delivery: 'email.delivery' }[feedback.kind];
  const status = {
    bounce: feedback.kind === 'bounce' && feedback.bounce === 'hard' ? 'BOUNCED' : null,
    complaint: 'COMPLAINED',
    delivery: 'DELIVERED',
  }[feedback.kind];
  const detail =
    feedback.kind === 'bounce'
      ? { bounceType: feedback.bounce, reason: feedback.diagnostic }
      : feedback.kind === 'complaint'
        ? { feedbackType: feedback.feedbackType }
        : {};
  const reason = feedback.kind === 'bounce' ? feedback.diagnostic : null;
  const rows = await queryRows<{ id: string }>(
    db,
    sql`WITH matched AS (
          SELECT id FROM emails
          WHERE provider_message_id = ${feedback.messageId} OR id = ${feedback.emailId}::uuid
          LIMIT 1
        ), updated AS (
          UPDATE emails e SET
            status = CASE
              WHEN ${status}::text IS NULL THEN e.status
              WHEN ${status}::text = 'DELIVERED' AND e.status <> 'SENT' THEN e.status
              ELSE ${status}::text END,
            delivered_at = CASE WHEN ${feedback.kind} = 'delivery' THEN COALESCE(e.delivered_at, now()) ELSE e.delivered_at END,
            bounced_at = CASE WHEN ${status}::text = 'BOUNCED' THEN COALESCE(e.bounced_at, now()) ELSE e.bounced_at END,
            complained_at = CASE WHEN ${feedback.kind} = 'complaint' THEN COALESCE(e.complained_at, now()) ELSE e.complained_at END,
            last_error = CASE WHEN ${feedback.kind} = 'bounce' THEN ${reason}::text ELSE e.last_error END,
            updated_at = now()
          FROM matched WHERE e.id = matched.id
          RETURNING e.*
        ), recorded AS (
          INSERT INTO events (id, project_id, contact_id, name, data)
          SELECT uuidv7_compat(), project_id, contact_id, ${event},
                 jsonb_strip_nulls(jsonb_build_object('emailId', id, 'subject', subject, 'templateId', template_id)
                   || ${JSON.stringify({ ...detail, provider: 'ses' })}::jsonb)
          FROM updated WHERE contact_id IS NOT NULL
        )
        SELECT id FROM updated`,
  );
  return rows.length > 0;
}
