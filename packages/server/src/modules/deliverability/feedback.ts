import type { SuppressionReason } from '@pigeon/contract';
import { queryRows, raw, runStatement, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { deliveryFeedback } from '../../metrics/registry.js';
import { unsubscribeSuppressed } from '../contacts/public.js';
import { markBounced, markComplained, markDelivered } from '../email-states/public.js';
import { recordEmailEvent } from '../event-log/public.js';
import { checkProjectHealth } from './health.js';

/** Where a piece of feedback came from. */
export type FeedbackSource = 'smtp' | 'dsn' | 'arf' | 'sns';

/**
 * One piece of delivery feedback about one email:
 * - `bounce` hard (permanent: the address does not exist, the domain refuses it) or soft
 *   (temporary: mailbox full, delayed), with the receiving server's diagnostic code;
 * - `complaint`: the recipient marked it as spam (`feedbackType` as the report names it, e.g. `abuse`);
 * - `delivery`: the receiving server accepted it into the mailbox.
 */
export type DeliveryFeedback =
  | { kind: 'bounce'; bounceType: 'hard' | 'soft'; diagnostic: string | null; source: FeedbackSource }
  | { kind: 'complaint'; feedbackType: string | null; source: FeedbackSource }
  | { kind: 'delivery'; detail?: string | null; source: FeedbackSource };

export interface FeedbackOutcome {
  emailId: string;
  projectId: string;
  /** False when the same feedback was already recorded (a retried SNS notification, a second DSN). */
  recorded: boolean;
  /** The address was suppressed for the project by this feedback. */
  suppressed: boolean;
  /** This feedback pushed the project over a health threshold: campaigns are now paused. */
  campaignsPaused: boolean;
}

interface EmailState {
  id: string;
  project_id: string;
  contact_id: string | null;
  to_email: string;
  subject: string;
  template_id: string | null;
  campaign_id: string | null;
  bounced_at: Date | null;
  complained_at: Date | null;
  delivered_at: Date | null;
}

const EVENT_NAME = { bounce: 'email.bounce', complaint: 'email.complaint', delivery: 'email.delivery' } as const;

/**
 * Records one piece of delivery feedback for an email and applies what follows from it, in one
 * transaction: the email's state and timestamp (BOUNCED, COMPLAINED; a delivery only sets `delivered_at`), the `email.bounce` / `email.complaint` /
 * `email.delivery` event on the contact, and for a hard bounce or a complaint the suppression of
 * the address for the project and the unsubscription of the contact (`contact.unsubscribed` with
 * its `reason`). Then the project's health is checked (campaigns pause above a threshold).
 *
 * Idempotent per email and kind (except soft bounces, which are events only): feedback already
 * recorded changes nothing and says `recorded: false`. Returns undefined for an unknown email.
 * Every feedback path calls this: SMTP replies at delivery, DSNs and ARF reports received over
 * SMTP, and (later) Amazon SNS notifications.
 */
export async function recordDeliveryFeedback(
  deps: AppDeps,
  emailId: string,
  feedback: DeliveryFeedback,
  options: {
    /**
     * Runs first in the same transaction; false: this notification was seen before (an SNS
     * message's receipt already stored), nothing is recorded. Keeps "once per notification" atomic.
     */
    firstSeen?: (db: Queryable) => Promise<boolean>;
  } = {},
): Promise<FeedbackOutcome | undefined> {
  const outcome = await inTransaction(deps.db.pool, async (client) => {
    const [email] = await queryRows<EmailState>(
      client,
      sql`SELECT id, project_id, contact_id, to_email, subject, template_id, campaign_id, bounced_at, complained_at, delivered_at
          FROM emails WHERE id = ${emailId}::uuid FOR UPDATE`,
    );
    if (!email) return undefined;
    const unchanged = { emailId: email.id, projectId: email.project_id, recorded: false, suppressed: false };
    if (options.firstSeen && !(await options.firstSeen(client))) return { ...unchanged, campaignsPaused: false };
    const recorded = await changeState(client, email, feedback);
    const suppression = suppressionReasonOf(feedback);
    let suppressed = false;
    if (recorded) {
      await recordEvent(client, email, feedback);
      if (suppression) suppressed = await suppress(client, email, suppression, detailOf(feedback));
    }
    return { emailId: email.id, projectId: email.project_id, recorded, suppressed, campaignsPaused: false };
  });
  if (outcome?.recorded) recordFeedbackMetric(feedback);
  if (!outcome?.recorded || !suppressionReasonOf(feedback)) return outcome;
  return { ...outcome, campaignsPaused: await checkProjectHealth(deps, outcome.projectId) };
}

/** Moves the email's state; false when this feedback was already recorded for it. */
async function changeState(db: Queryable, email: EmailState, feedback: DeliveryFeedback): Promise<boolean> {
  if (feedback.kind === 'bounce') {
    if (feedback.bounceType === 'soft') return true;
    if (email.bounced_at) return false;
    await markBounced(db, email.id, feedback.diagnostic);
    return true;
  }
  if (feedback.kind === 'complaint') {
    if (email.complained_at) return false;
    await markComplained(db, email.id);
    return true;
  }
  if (email.delivered_at || email.bounced_at) return false;
  await markDelivered(db, email.id);
  return true;
}

const detailOf = (feedback: DeliveryFeedback): string | null =>
  feedback.kind === 'bounce'
    ? feedback.diagnostic
    : feedback.kind === 'complaint'
      ? feedback.feedbackType
      : (feedback.detail ?? null);

function suppressionReasonOf(feedback: DeliveryFeedback): SuppressionReason | undefined {
  if (feedback.kind === 'complaint') return 'complaint';
  if (feedback.kind === 'bounce' && feedback.bounceType === 'hard') return 'hard_bounce';
  return undefined;
}

async function recordEvent(db: Queryable, email: EmailState, feedback: DeliveryFeedback): Promise<void> {
  const text = (value: string | null | undefined) => sql`${value ?? null}::text`;
  await recordEmailEvent(db, email.id, EVENT_NAME[feedback.kind], {
    campaignId: raw('e.campaign_id'),
    source: text(feedback.source),
    ...(feedback.kind === 'bounce'
      ? {
          bounceType: text(feedback.bounceType),
          diagnosticCode: text(feedback.diagnostic),
          reason: text(feedback.diagnostic),
        }
      : feedback.kind === 'complaint'
        ? { feedbackType: text(feedback.feedbackType) }
        : { detail: text(feedback.detail) }),
  });
}

/**
 * Suppresses the address for the project (first reason wins) and unsubscribes the contact, with
 * its `contact.unsubscribed` event carrying the reason. True when the address was not yet suppressed.
 */
async function suppress(
  db: Queryable,
  email: EmailState,
  reason: SuppressionReason,
  detail: string | null,
): Promise<boolean> {
  const inserted = await runStatement(
    db,
    sql`INSERT INTO suppressions (id, project_id, email, reason, detail, email_id)
     VALUES (uuidv7_compat(), ${email.project_id}, ${email.to_email.toLowerCase()}, ${reason}, ${detail?.slice(0, 500) ?? null}, ${email.id})
     ON CONFLICT (project_id, email) DO NOTHING`,
  );
  await unsubscribeSuppressed(db, email.project_id, email.to_email, reason, email.id);
  return inserted > 0;
}

function recordFeedbackMetric(feedback: DeliveryFeedback): void {
  if (feedback.kind === 'bounce')
    deliveryFeedback.inc({ kind: feedback.bounceType === 'soft' ? 'soft_bounce' : 'bounce' });
  else if (feedback.kind === 'complaint') deliveryFeedback.inc({ kind: 'complaint' });
}
