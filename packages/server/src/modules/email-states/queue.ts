import type { ContentType } from '@pigeon/contract';
import { EMAIL_QUEUED_CHANNEL } from '../../db/channels.js';
import { queryRows, raw, type Sql, sql, toQuery } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

export const NOTIFY_CHANNEL = EMAIL_QUEUED_CHANNEL;

/** Named priorities of the one delivery queue: lower goes first. */
export const PRIORITY = { transactional: 0, workflow: 1, campaign: 2 } as const;

/** A composed message ready for the delivery workers. */
export interface QueuedEmail {
  id: string;
  projectId: string;
  contactId: string | null;
  templateId: string | null;
  workflowExecutionId?: string | null;
  type: ContentType;
  /** What made it: TRANSACTIONAL (/v1/send), WORKFLOW, CAMPAIGN_TEST … */
  source?: string;
  priority: number;
  from: { email: string; name: string | null };
  replyTo: string | null;
  to: { email: string; name: string | null };
  /** Copies that travel with this message (`/v1/send`'s `cc`, in the header, and `bcc`, envelope only). */
  cc?: Array<{ email: string; name: string | null }>;
  bcc?: Array<{ email: string; name: string | null }>;
  tags?: Record<string, string>;
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
  attachments?: Array<{ filename: string; content: string; contentType?: string }>;
  tracked: boolean;
  /** A scheduled send: the row waits in the queue until then (its `next_attempt_at` is the timer). */
  sendAt?: Date | null;
  /**
   * A message its sender built (SMTP submission): sent as these bytes (DKIM-signed, Feedback-ID
   * added), with its own `Message-ID`; the other content fields are what `GET /emails` shows.
   */
  built?: { mime: Buffer; messageId: string };
}

/**
 * Queueing, the last step of sending after validation and composition: stores a QUEUED email in
 * the caller's transaction and wakes the delivery workers when it commits (repeated notifications
 * in one transaction fold into one).
 */
export async function queueEmail(db: Queryable, email: QueuedEmail): Promise<void> {
  const json = (value: unknown[] | Record<string, string> | undefined) =>
    value && Object.keys(value).length ? JSON.stringify(value) : null;
  const sendAt = email.sendAt ?? null;
  const { text, values } = toQuery(sql`WITH queued AS (
       INSERT INTO emails (id, project_id, contact_id, template_id, workflow_execution_id, content_type, source, priority,
         from_email, from_name, reply_to, to_email, to_name, subject, html, text, headers, attachments, message_id,
         tracked, cc, bcc, tags, send_at, next_attempt_at, mime)
       VALUES (${email.id}, ${email.projectId}, ${email.contactId}, ${email.templateId}, ${email.workflowExecutionId ?? null},
         ${email.type}, ${email.source ?? 'TRANSACTIONAL'}, ${email.priority}, ${email.from.email}, ${email.from.name},
         ${email.replyTo}, ${email.to.email}, ${email.to.name}, ${email.subject}, ${email.html}, ${email.text},
         ${JSON.stringify(email.headers)}, ${JSON.stringify(email.attachments ?? [])},
         ${email.built?.messageId ?? `<${email.id}@${email.from.email.split('@')[1]}>`}, ${email.tracked},
         ${json(email.cc)}, ${json(email.bcc)}, ${json(email.tags)}, ${sendAt}::timestamptz,
         coalesce(${sendAt}::timestamptz, now()), ${email.built?.mime ?? null}::bytea)
       RETURNING id
     ) SELECT pg_notify(${NOTIFY_CHANNEL}, '') FROM queued`);
  await db.query(text, values);
}

export type PriorityName = keyof typeof PRIORITY;

export interface QueueStats {
  /** Every named priority, even when nothing waits in it. */
  byPriority: Array<{ priority: PriorityName; queued: number; oldestDueSeconds: number }>;
  sending: number;
  campaignRecipientsPending: number;
}

/**
 * The delivery queue now: waiting emails per priority and how late the most overdue one is (an
 * index-only scan of the queue's partial index), and what is being sent (the claimed ones' index).
 * Campaign recipients pending: campaign-priority emails queued or being sent.
 */
export async function queueStats(db: Queryable): Promise<QueueStats> {
  const [queued, sending] = await Promise.all([
    queryRows<{ priority: number; n: number; oldest_due: number }>(
      db,
      sql`SELECT priority, count(*)::int AS n,
                 COALESCE(extract(epoch FROM now() - min(next_attempt_at) FILTER (WHERE next_attempt_at <= now())), 0)::float8 AS oldest_due
          FROM emails WHERE status = 'QUEUED' GROUP BY priority`,
    ),
    queryRows<{ priority: number; n: number }>(
      db,
      sql`SELECT priority, count(*)::int AS n FROM emails WHERE status = 'SENDING' GROUP BY priority`,
    ),
  ]);
  const byPriority = Object.entries(PRIORITY).map(([name, n]) => {
    const row = queued.find((r) => r.priority === n);
    return { priority: name as PriorityName, queued: row?.n ?? 0, oldestDueSeconds: Math.max(0, row?.oldest_due ?? 0) };
  });
  const of = (rows: Array<{ priority: number; n: number }>, priority: number) =>
    rows.find((r) => r.priority === priority)?.n ?? 0;
  return {
    byPriority,
    sending: sending.reduce((sum, r) => sum + r.n, 0),
    campaignRecipientsPending: of(queued, PRIORITY.campaign) + of(sending, PRIORITY.campaign),
  };
}

/** What every email of one campaign dispatch shares. */
export interface CampaignMail {
  projectId: string;
  campaignId: string;
  templateId: string | null;
  type: ContentType;
  from: { email: string; name: string | null };
  replyTo: string | null;
  subject: string;
  /** The sender's domain: the right side of each Message-ID. */
  domain: string;
  tracked: boolean;
}

/**
 * Statement fragment: one QUEUED campaign email (composed at delivery: no body yet) per row of the
 * CTE `audience` (email_id, id: the contact, email, due), RETURNING 1 per email queued. One email
 * per campaign and contact rests on the caller: the campaign start runs once, under the campaign's
 * row lock (a partitioned `emails` cannot hold a unique index without `id`: ARCHITECTURE.md).
 */
export function insertCampaignEmails(mail: CampaignMail, audience: 'audience'): Sql {
  return sql`INSERT INTO emails (id, project_id, contact_id, template_id, campaign_id, source, content_type, priority,
      from_email, from_name, reply_to, to_email, subject, html, text, message_id, tracked, next_attempt_at)
    SELECT a.email_id, ${mail.projectId}::uuid, a.id, ${mail.templateId}::uuid, ${mail.campaignId}::uuid,
      'CAMPAIGN', ${mail.type}, ${PRIORITY.campaign}, ${mail.from.email}, ${mail.from.name},
      ${mail.replyTo}, a.email, ${mail.subject}, '', '',
      '<' || a.email_id || '@' || ${mail.domain} || '>', ${mail.tracked}, a.due
    FROM ${raw(audience)} a
    RETURNING 1`;
}
