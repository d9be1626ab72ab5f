import type { ContentType } from '@pigeon/contract';
import { EMAIL_QUEUED_CHANNEL } from '../../db/channels.js';
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
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
  attachments?: Array<{ filename: string; content: string; contentType?: string }>;
  tracked: boolean;
}

/**
 * Queueing, the last step of sending after validation and composition: stores a QUEUED email in
 * the caller's transaction and wakes the delivery workers when it commits (repeated notifications
 * in one transaction fold into one).
 */
export async function queueEmail(db: Queryable, email: QueuedEmail): Promise<void> {
  await db.query(
    `WITH queued AS (
       INSERT INTO emails (id, project_id, contact_id, template_id, workflow_execution_id, content_type, source, priority,
         from_email, from_name, reply_to, to_email, to_name, subject, html, text, headers, attachments, message_id, tracked)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) RETURNING id
     ) SELECT pg_notify('${NOTIFY_CHANNEL}', '') FROM queued`,
    [
      email.id,
      email.projectId,
      email.contactId,
      email.templateId,
      email.workflowExecutionId ?? null,
      email.type,
      email.source ?? 'TRANSACTIONAL',
      email.priority,
      email.from.email,
      email.from.name,
      email.replyTo,
      email.to.email,
      email.to.name,
      email.subject,
      email.html,
      email.text,
      JSON.stringify(email.headers),
      JSON.stringify(email.attachments ?? []),
      `<${email.id}@${email.from.email.split('@')[1]}>`,
      email.tracked,
    ],
  );
}
