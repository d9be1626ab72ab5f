import type { EmailStatus } from '@pigeon/contract';
import { preparedRows, queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { insertEmailEvents } from '../event-log/public.js';
import type { QueueWindow } from './queue-window.js';
import { status } from './status-name.js';

/**
 * The `emails` table's one writer (ARCHITECTURE.md "Table owners"): every change of an email's
 * state goes through a function or a statement fragment here. Queueing is in queue.ts, requeueing
 * FAILED mail in requeue.ts; this file holds the rest: the delivery loop's claim and outcomes,
 * cancellation, delivery feedback (bounce, complaint, delivery), opens and clicks, and holding a
 * project's campaign mail while its campaigns are paused.
 *
 * The module sits below emails (send, delivery), campaigns, deliverability and engagement, which
 * call it; it imports only the event log. Status names are the contract's `EmailStatus`.
 */
export { status };

/** A claimed email as the delivery loop needs it. */
export interface ClaimedEmail {
  id: string;
  project_id: string;
  from_email: string;
  from_name: string | null;
  reply_to: string | null;
  to_email: string;
  to_name: string | null;
  cc: Array<{ email: string; name: string | null }> | null;
  bcc: Array<{ email: string; name: string | null }> | null;
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
  attachments: Array<{ filename: string; content: string; contentType?: string }>;
  message_id: string;
  attempts: number;
  created_at: Date;
  /** Set when a FAILED message was queued again: its lifetime counts from then. */
  requeued_at: Date | null;
  campaign_id: string | null;
  contact_id: string | null;
  tracked: boolean;
  template_id: string | null;
  source: string;
  /** The suppression reason when the address was suppressed after the email was queued. */
  suppressed: string | null;
  /** A message its sender built (SMTP submission), sent as it is; null for mail Pigeon composes. */
  mime: Buffer | null;
  /** The sender domain's DKIM key, read with the claim (null: no such domain, the mail goes unsigned). */
  dkim_selector: string | null;
  dkim_private_key: string | null;
}

/**
 * Claims up to `limit` due emails (transactional first), with each one's DKIM key and suppression, in one statement.
 *
 * An unnamed statement, planned at every call with its values (a custom plan): as a named prepared
 * statement PostgreSQL chose its generic plan at 82% of calls, and mid-campaign that plan read 14,400–
 * 14,900 shared buffers and took 21–33 ms for 10 rows where the custom plan read 170–210 and took
 * 0.5–0.8 ms (`bench/campaign-db.mjs --probe-claim-scan`, bench/results/2026-12-07-loops.md). The
 * `window` (bare parameters) lets each plan keep only the partitions that can hold mail on its way.
 * The limit stays a bare parameter: hidden behind a sub-select (`LIMIT (SELECT <limit>::int)`,
 * e1830f0), a backend of PostgreSQL 18.4 running this statement died of a segfault three times in
 * concurrent test runs (`bench/results/2026-11-27-fifteenth-sitting.md`). The claimed ids are an
 * array (one InitPlan) that the update looks up by primary key: as `id IN (subquery)` beside the
 * window's range, the planner could pick a semi join that walks every row of the range.
 */
export function claimEmails(db: Queryable, limit: number, window: QueueWindow): Promise<ClaimedEmail[]> {
  const inWindow = sql`id BETWEEN ${window.from}::uuid AND ${window.to}::uuid`;
  return queryRows<ClaimedEmail>(
    db,
    sql`WITH claimed AS (
      UPDATE emails SET status = ${status('SENDING')}, claimed_at = now(), attempts = attempts + 1, updated_at = now()
      WHERE ${inWindow} AND id = ANY(ARRAY(
        SELECT id FROM emails WHERE ${inWindow} AND status = ${status('QUEUED')} AND next_attempt_at <= now()
        ORDER BY priority, next_attempt_at LIMIT ${limit}::int FOR UPDATE SKIP LOCKED
      )) RETURNING *
    )
    SELECT e.*, d.dkim_selector, d.dkim_private_key, s.reason AS suppressed
    FROM claimed e LEFT JOIN domains d ON d.project_id = e.project_id AND d.domain = split_part(e.from_email, '@', 2)
    LEFT JOIN suppressions s ON s.project_id = e.project_id AND s.email = e.to_email
    ORDER BY e.priority, e.next_attempt_at`,
  );
}

/** A message the transport took: the outbox file or the provider's message id (SES), if any. */
export interface SentEmail {
  id: string;
  file: string | null;
  providerId: string | null;
  /** Copies (cc/bcc) the relay refused at RCPT, named for `last_error` (ARCHITECTURE.md, "Refused copies"). */
  refused: string | null;
  /** The relay that took it (its name in `RELAYS`, or `smtp`/`ses`/`outbox` with one relay). */
  relay: string;
}

/**
 * Marks claimed emails SENT with their events on the contacts, any number in one named statement.
 * `delivered`: SMTP, whose relay's final 250 is both the hand-over (`email.sent`) and the receiving
 * server's acceptance (`email.delivery`, `delivered_at`); the status stays SENT (feedback may change
 * it later). Otherwise (the local outbox, SES) only `email.sent`: no receiving server answered yet.
 *
 * The arrays go through sub-selects so the planner cannot see their length: with bare parameters it
 * estimated each call's group exactly, always found that cheaper than its generic plan and planned
 * every call anew, over every partition of `emails` and `events` (0.33 ms of PostgreSQL's 0.97 ms per
 * delivered message, `bench/campaign-db.mjs`). Now the statement keeps its generic plan.
 */
export async function markSent(db: Queryable, delivered: boolean, sent: SentEmail[]): Promise<void> {
  const set = delivered
    ? raw('sent_at = now(), delivered_at = now()')
    : raw('sent_at = now(), outbox_file = v.file, provider_message_id = v.provider_id');
  const names = delivered ? raw(`('email.sent'), ('email.delivery')`) : raw(`('email.sent')`);
  await preparedRows(
    db,
    delivered ? 'emails.sent-delivered' : 'emails.sent',
    sql`WITH e AS (
      UPDATE emails e SET status = ${status('SENT')}, ${set}, claimed_at = NULL, last_error = v.refused, relay = v.relay,
        updated_at = now()
      FROM unnest((SELECT ${sent.map((s) => s.id)}::uuid[]), (SELECT ${sent.map((s) => s.file)}::text[]),
        (SELECT ${sent.map((s) => s.providerId)}::text[]), (SELECT ${sent.map((s) => s.refused)}::text[]),
        (SELECT ${sent.map((s) => s.relay)}::text[]))
        AS v(id, file, provider_id, refused, relay)
      WHERE e.id = v.id AND e.status = ${status('SENDING')} RETURNING e.*
    )
    ${insertEmailEvents({ from: sql`e CROSS JOIN (VALUES ${names}) AS n(name)`, name: raw('n.name') })}`,
  );
}

/** A cancelled email's charge: who paid for it, for what kind of mail, and when (the month to refund). */
export interface CancelledCharge {
  projectId: string;
  source: string;
  chargedAt: Date;
}

/**
 * A claimed email that will not be sent (suppressed since it was queued, its campaign cancelled).
 * Answers its charge when this call cancelled it (undefined when it was no longer claimed).
 */
export async function cancelClaimed(
  db: Queryable,
  id: string,
  reason: string | null,
): Promise<CancelledCharge | undefined> {
  const [row] = await queryRows<CancelledCharge>(
    db,
    sql`UPDATE emails SET status = ${status('CANCELLED')}, claimed_at = NULL, last_error = COALESCE(${reason}, last_error),
          updated_at = now()
        WHERE id = ${id}::uuid AND status = ${status('SENDING')}
        RETURNING project_id AS "projectId", source, COALESCE(requeued_at, created_at) AS "chargedAt"`,
  );
  return row;
}

/** What a temporary failure leaves a claimed email: queued again, or failed for good. */
type RetryStatus = Extract<EmailStatus, 'QUEUED' | 'FAILED'>;

/** The end of an email row's lifetime, as SQL on the `emails` row being updated. */
const lifetimeEnd = (lifetimeSeconds: number) =>
  sql`COALESCE(requeued_at, created_at) + make_interval(secs => ${lifetimeSeconds})`;

/**
 * A claimed email's temporary failure: queued again after `delaySeconds` (never later than the end
 * of its lifetime), or FAILED once that has passed. Answers the status it got.
 */
export async function retryLater(
  db: Queryable,
  id: string,
  { reason, delaySeconds, lifetimeSeconds }: { reason: string; delaySeconds: number; lifetimeSeconds: number },
): Promise<RetryStatus | undefined> {
  const end = lifetimeEnd(lifetimeSeconds);
  const [row] = await queryRows<{ status: RetryStatus }>(
    db,
    sql`UPDATE emails SET claimed_at = NULL, last_error = ${reason}, updated_at = now(),
          status = CASE WHEN now() >= ${end} THEN ${status('FAILED')} ELSE ${status('QUEUED')} END,
          next_attempt_at = LEAST(now() + make_interval(secs => ${delaySeconds}), ${end})
        WHERE id = ${id}::uuid AND status = ${status('SENDING')} RETURNING status`,
  );
  return row?.status;
}

/**
 * Claimed mail given back untried or failed by the transport: as it was before the claim; with
 * `notBefore` (every relay of its route is down while others work), not due before then.
 */
export async function requeueUncharged(
  db: Queryable,
  ids: string[],
  reason: string | null,
  notBefore: Date | null = null,
): Promise<void> {
  await queryRows(
    db,
    sql`UPDATE emails SET status = ${status('QUEUED')}, claimed_at = NULL, attempts = attempts - 1,
          last_error = COALESCE(${reason}, last_error), updated_at = now(),
          next_attempt_at = GREATEST(next_attempt_at, ${notBefore}::timestamptz)
        WHERE id = ANY(${ids}::uuid[]) AND status = ${status('SENDING')}`,
  );
}

/** FAILED for good, saying why (and what the last try met). */
const expire = sql`status = ${status('FAILED')}, claimed_at = NULL, updated_at = now(),
  last_error = left('expired: not delivered within its lifetime' || COALESCE('; last error: ' || last_error, ''), 500)`;

/** Claimed emails past their lifetime. */
export async function failExpiredClaimed(db: Queryable, ids: string[]): Promise<void> {
  await queryRows(
    db,
    sql`UPDATE emails SET ${expire} WHERE id = ANY(${ids}::uuid[]) AND status = ${status('SENDING')}`,
  );
}

/** Due queued emails past their lifetime (while the transport is down nothing is claimed). */
export async function failExpiredQueued(db: Queryable, lifetimeSeconds: number): Promise<void> {
  await queryRows(
    db,
    sql`UPDATE emails SET ${expire}
        WHERE status = ${status('QUEUED')} AND next_attempt_at <= now() AND ${lifetimeEnd(lifetimeSeconds)} <= now()`,
  );
}

/**
 * Claims older than `timeoutSeconds` that are not in `held` (a dead worker's): back to the queue
 * with no attempt used. Answers how many. `held` is an anti-join, not `NOT (id = ANY(…))`: against
 * the partition bounds of `emails` the planner tried to refute that predicate id by id (10 ms of
 * planning per call with 40 held ids, more than the whole delivery of a message).
 */
export async function reclaimAbandoned(
  db: Queryable,
  held: string[],
  timeoutSeconds: number,
  window: QueueWindow,
): Promise<number> {
  const rows = await preparedRows(
    db,
    'emails.reclaim',
    sql`UPDATE emails SET status = ${status('QUEUED')}, claimed_at = NULL, attempts = greatest(attempts - 1, 0)
        WHERE id BETWEEN ${window.from}::uuid AND ${window.to}::uuid
          AND status = ${status('SENDING')} AND claimed_at < now() - make_interval(secs => ${timeoutSeconds})
          AND NOT EXISTS (SELECT 1 FROM unnest(${held}::uuid[]) AS h(id) WHERE h.id = emails.id)
        RETURNING id`,
  );
  return rows.length;
}

/** `POST /emails/:id/cancel`: only while it waits in the queue. False when it is no longer QUEUED. */
export async function cancelQueued(db: Queryable, projectId: string, id: string): Promise<boolean> {
  const rows = await queryRows(
    db,
    sql`UPDATE emails SET status = ${status('CANCELLED')}, last_error = 'cancelled by request', updated_at = now()
        WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid AND status = ${status('QUEUED')} RETURNING id`,
  );
  return rows.length > 0;
}

/** Moves a scheduled email (QUEUED, its time still ahead) to another time. False when it is not scheduled. */
export async function rescheduleQueued(db: Queryable, projectId: string, id: string, at: Date): Promise<boolean> {
  const rows = await queryRows(
    db,
    sql`UPDATE emails SET send_at = ${at}, next_attempt_at = ${at}, updated_at = now()
        WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid AND status = ${status('QUEUED')}
          AND send_at > now() RETURNING id`,
  );
  return rows.length > 0;
}

/** Cancels a campaign's queued emails (its cancel); answers how many. */
export async function cancelCampaignEmails(db: Queryable, campaignId: string): Promise<number> {
  const rows = await queryRows(
    db,
    sql`UPDATE emails SET status = ${status('CANCELLED')}, updated_at = now()
        WHERE campaign_id = ${campaignId}::uuid AND status = ${status('QUEUED')} RETURNING 1`,
  );
  return rows.length;
}

/** Feedback: a hard bounce. */
export async function markBounced(db: Queryable, id: string, diagnostic: string | null): Promise<void> {
  await queryRows(
    db,
    sql`UPDATE emails SET status = ${status('BOUNCED')}, bounced_at = now(), claimed_at = NULL,
          last_error = ${diagnostic?.slice(0, 500) ?? null}, updated_at = now()
        WHERE id = ${id}::uuid`,
  );
}

/** Feedback: the recipient complained. */
export async function markComplained(db: Queryable, id: string): Promise<void> {
  await queryRows(
    db,
    sql`UPDATE emails SET status = ${status('COMPLAINED')}, complained_at = now(), updated_at = now() WHERE id = ${id}::uuid`,
  );
}

/** Feedback: the receiving server accepted it. The status stays what delivery made it (SENT). */
export async function markDelivered(db: Queryable, id: string): Promise<void> {
  await queryRows(db, sql`UPDATE emails SET delivered_at = now(), updated_at = now() WHERE id = ${id}::uuid`);
}

/** Holds a project's queued campaign mail (its campaigns are paused): due never, until released. */
export async function holdCampaignEmails(db: Queryable, projectId: string): Promise<void> {
  await queryRows(
    db,
    sql`UPDATE emails SET next_attempt_at = 'infinity'
        WHERE project_id = ${projectId}::uuid AND campaign_id IS NOT NULL AND status = ${status('QUEUED')}`,
  );
}

/** Statement fragment: held campaign mail of the projects `projectIds` selects is due again. */
export function releaseCampaignEmails(projectIds: Sql): Sql {
  return sql`UPDATE emails SET next_attempt_at = now()
    WHERE project_id IN (${projectIds}) AND campaign_id IS NOT NULL AND status = ${status('QUEUED')}
      AND next_attempt_at = 'infinity'`;
}

/**
 * CTE `e`: the email counted as opened unless it falls in the burst window of its last counted
 * open (rows: the `emails` columns events need).
 */
export function markOpened(emailId: string, burstSeconds: number): Sql {
  return sql`e AS (
    UPDATE emails SET opens = opens + 1, opened_at = coalesce(opened_at, now()), last_opened_at = now(),
      updated_at = now()
    WHERE id = ${emailId}::uuid AND (last_opened_at IS NULL OR last_opened_at < now() - make_interval(secs => ${burstSeconds}))
    RETURNING id, project_id, contact_id, subject, template_id
  )`;
}

/**
 * CTEs `counted`, `e`: a click of `link` counted unless the same link of the same email was counted
 * within the burst window; a click also marks the email opened (clients that block images still
 * click), without an open.
 */
export function markClicked(emailId: string, link: string, burstSeconds: number): Sql {
  return sql`counted AS (
    INSERT INTO email_link_clicks (email_id, link) SELECT id, ${link} FROM emails WHERE id = ${emailId}::uuid
    ON CONFLICT (email_id, link) DO UPDATE SET clicks = email_link_clicks.clicks + 1, last_clicked_at = now()
      WHERE email_link_clicks.last_clicked_at < now() - make_interval(secs => ${burstSeconds})
    RETURNING email_id
  ), e AS (
    UPDATE emails e SET clicks = e.clicks + 1, clicked_at = coalesce(e.clicked_at, now()),
      opened_at = coalesce(e.opened_at, now()), updated_at = now()
    FROM counted WHERE e.id = counted.email_id
    RETURNING e.id, e.project_id, e.contact_id, e.subject, e.template_id
  )`;
}
