import {
  type EmailDetail,
  type EmailListQuery,
  type EmailStatus,
  type EmailSummary,
  SEND_AT_MAX_DAYS,
} from '@pigeon/contract';
import type { z } from 'zod';
import { countUpToCap, LATER_PAGE } from '../../db/capped-count.js';
import { and, queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { decodeCursor, encodeCursor } from '../../kit/cursor.js';
import { conflict, notFound, validationFailed } from '../../kit/errors.js';
import { cancelQueued, contentClearedSql, requeueFailedEmails, rescheduleQueued } from '../email-states/public.js';

type Summary = z.infer<typeof EmailSummary>;

/**
 * The status shown for an email: the row's own, except a queued email whose `send_at` is ahead
 * (SCHEDULED) and a sent one the receiving server accepted (DELIVERED).
 */
const STATUS: Sql = raw(`CASE
  WHEN em.status = 'QUEUED' AND em.send_at > now() THEN 'SCHEDULED'
  WHEN em.status = 'SENT' AND em.delivered_at IS NOT NULL THEN 'DELIVERED'
  ELSE em.status END`);

interface EmailRow {
  id: string;
  shown_status: EmailStatus;
  status: EmailStatus;
  to_email: string;
  to_name: string | null;
  from_email: string;
  from_name: string | null;
  subject: string;
  source: string;
  contact_id: string | null;
  template_id: string | null;
  campaign_id: string | null;
  workflow_id: string | null;
  workflow_execution_id: string | null;
  send_at: Date | null;
  sent_at: Date | null;
  delivered_at: Date | null;
  opened_at: Date | null;
  clicked_at: Date | null;
  bounced_at: Date | null;
  complained_at: Date | null;
  opens: number;
  clicks: number;
  last_error: string | null;
  created_at: Date;
  created_at_text: string;
  updated_at: Date;
  project_id: string;
  content_cleared: boolean;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

const toSummary = (r: EmailRow): Summary => ({
  id: r.id,
  status: r.shown_status,
  to: r.to_email,
  toName: r.to_name,
  from: r.from_email,
  fromName: r.from_name,
  subject: r.subject,
  source: r.source,
  contactId: r.contact_id,
  templateId: r.template_id,
  campaignId: r.campaign_id,
  workflowId: r.workflow_id,
  workflowExecutionId: r.workflow_execution_id,
  sendAt: iso(r.send_at),
  sentAt: iso(r.sent_at),
  deliveredAt: iso(r.delivered_at),
  openedAt: iso(r.opened_at),
  clickedAt: iso(r.clicked_at),
  bouncedAt: iso(r.bounced_at),
  complainedAt: iso(r.complained_at),
  opens: r.opens,
  clicks: r.clicks,
  lastError: r.last_error,
  contentCleared: r.content_cleared,
  createdAt: r.created_at.toISOString(),
});

/** The metadata columns only: never the content (HTML, text, attachments). */
const selectEmails = (where: Sql, tail: Sql = raw('')) => sql`
  SELECT em.id, ${STATUS} AS shown_status, em.status, em.to_email, em.to_name, em.from_email, em.from_name, em.subject,
         em.source, em.contact_id, em.template_id, em.campaign_id, x.workflow_id, em.workflow_execution_id, em.send_at,
         em.sent_at, em.delivered_at, em.opened_at, em.clicked_at, em.bounced_at, em.complained_at, em.opens, em.clicks,
         em.last_error, em.created_at, em.created_at::text AS created_at_text, em.updated_at, em.project_id,
         ${contentClearedSql('em')} AS content_cleared
  FROM emails em LEFT JOIN workflow_executions x ON x.id = em.workflow_execution_id
  WHERE ${where} ${tail}`;

async function findEmail(db: Queryable, projectId: string, id: string): Promise<EmailRow> {
  const [row] = await queryRows<EmailRow>(
    db,
    selectEmails(sql`em.id = ${id}::uuid AND em.project_id = ${projectId}::uuid`),
  );
  if (!row) throw notFound('Email');
  return row;
}

/** Events recorded in one transaction share a time: show them in the order they happen to a message. */
const LIFECYCLE_ORDER = raw(`CASE name WHEN 'email.sent' THEN 0 WHEN 'email.delivery' THEN 1 WHEN 'email.open' THEN 2
  WHEN 'email.click' THEN 3 WHEN 'email.bounce' THEN 4 WHEN 'email.complaint' THEN 5 ELSE 6 END`);

interface ContentRow {
  cc: Array<{ email: string; name: string | null }> | null;
  bcc: Array<{ email: string; name: string | null }> | null;
  reply_to: string | null;
  tags: Record<string, string> | null;
  attempts: number;
  relay: string | null;
  html: string | null;
  text: string | null;
  headers: Record<string, string> | null;
  attachments: Array<{ filename: string; contentType: string | null; size: number }>;
}

/** The copies, tags and content of one email (its content without the attachments' bytes). */
async function emailContent(db: Queryable, id: string): Promise<ContentRow> {
  const [row] = await queryRows<ContentRow>(
    db,
    sql`SELECT cc, bcc, reply_to, tags, attempts, relay, html, text, headers,
          COALESCE((SELECT jsonb_agg(jsonb_build_object('filename', a->>'filename', 'contentType', a->>'contentType',
                      'size', length(decode(a->>'content', 'base64'))))
                    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(attachments) = 'array' THEN attachments ELSE '[]' END) a),
                   '[]') AS attachments
        FROM emails WHERE id = ${id}::uuid`,
  );
  if (!row) throw notFound('Email');
  return row;
}

/** `GET /emails/:id`: the email, its copies and content, and its timeline (queued or scheduled, its events, and how it ended). */
export async function getEmail(db: Queryable, projectId: string, id: string): Promise<z.infer<typeof EmailDetail>> {
  const row = await findEmail(db, projectId, id);
  const content = await emailContent(db, id);
  const events = row.contact_id
    ? await queryRows<{ name: string; created_at: Date; data: Record<string, unknown> }>(
        db,
        sql`SELECT name, created_at, data FROM events
            WHERE contact_id = ${row.contact_id}::uuid AND project_id = ${projectId}::uuid AND data->>'emailId' = ${id}
            ORDER BY created_at, ${LIFECYCLE_ORDER}, id`,
      )
    : [];
  const timeline = [
    row.send_at
      ? { type: 'email.scheduled', at: row.created_at.toISOString(), data: { sendAt: row.send_at.toISOString() } }
      : { type: 'email.queued', at: row.created_at.toISOString(), data: {} },
    ...events.map((e) => ({ type: e.name, at: e.created_at.toISOString(), data: e.data })),
  ];
  if (row.status === 'CANCELLED' || row.status === 'FAILED') {
    timeline.push({
      type: row.status === 'CANCELLED' ? 'email.cancelled' : 'email.failed',
      at: row.updated_at.toISOString(),
      data: row.last_error ? { reason: row.last_error } : {},
    });
  }
  // Campaign mail is composed per contact at delivery: the row holds no body of its own.
  const composedAtDelivery = row.source === 'CAMPAIGN';
  return {
    ...toSummary(row),
    timeline,
    cc: content.cc ?? [],
    bcc: content.bcc ?? [],
    replyTo: content.reply_to,
    tags: content.tags ?? {},
    attempts: content.attempts,
    relay: content.relay,
    content:
      row.content_cleared || composedAtDelivery
        ? null
        : {
            html: content.html || null,
            text: content.text || null,
            headers: content.headers ?? {},
            attachments: content.attachments,
          },
  };
}

/** `GET /emails`: newest first, keyset pages on (created_at, id). */
export async function listEmails(db: Queryable, projectId: string, query: z.infer<typeof EmailListQuery>) {
  const filters = [sql`em.project_id = ${projectId}::uuid`];
  if (query.contactId) filters.push(sql`em.contact_id = ${query.contactId}::uuid`);
  if (query.campaignId) filters.push(sql`em.campaign_id = ${query.campaignId}::uuid`);
  if (query.templateId) filters.push(sql`em.template_id = ${query.templateId}::uuid`);
  if (query.status) filters.push(sql`${STATUS} = ${query.status}`);
  if (query.source) filters.push(sql`em.source = ${query.source}`);
  // Every recipient is a contact of the project: through it, the contact's index finds its mail.
  if (query.to) {
    filters.push(sql`em.to_email = ${query.to} AND em.contact_id IN (
      SELECT id FROM contacts WHERE project_id = ${projectId}::uuid AND email = ${query.to})`);
  }
  if (query.after) filters.push(sql`em.created_at >= ${query.after}::timestamptz`);
  if (query.before) filters.push(sql`em.created_at < ${query.before}::timestamptz`);
  const page = [...filters];
  if (query.cursor) {
    const c = decodeCursor(query.cursor);
    page.push(sql`(em.created_at, em.id) < (${c.v}::timestamptz, ${c.id}::uuid)`);
  }
  // The page and its count at once, on two connections (as the events list reads them).
  const [rows, counted] = await Promise.all([
    queryRows<EmailRow>(
      db,
      selectEmails(and(page), sql`ORDER BY em.created_at DESC, em.id DESC LIMIT ${query.limit + 1}::int`),
    ),
    query.cursor ? LATER_PAGE : countUpToCap(db, raw('emails em'), and(filters)),
  ]);
  const hasMore = rows.length > query.limit;
  const data = rows.slice(0, query.limit);
  const last = data.at(-1);
  return {
    data: data.map(toSummary),
    // The raw timestamp (microseconds) so that no row is skipped or repeated between pages.
    cursor: hasMore && last ? encodeCursor({ v: last.created_at_text, id: last.id }) : null,
    hasMore,
    ...counted,
  };
}

/**
 * `POST /emails/:id/cancel`: only while the email waits in the queue (scheduled, or between
 * retries). Claimed by a worker (SENDING) or further, the transport may already have it: 409.
 */
export async function cancelEmail(db: Queryable, projectId: string, id: string): Promise<Summary> {
  const cancelled = await cancelQueued(db, projectId, id);
  const row = await findEmail(db, projectId, id);
  if (!cancelled) {
    throw conflict(`The email is ${row.shown_status}: only a queued or scheduled email can be cancelled`, {
      details: { status: row.shown_status },
    });
  }
  return toSummary(row);
}

/**
 * A scheduled email moved to another time ahead (at most SEND_AT_MAX_DAYS days), while it still
 * waits; 409 once it is due or gone further, as cancel answers.
 */
export async function rescheduleEmail(
  db: Queryable,
  projectId: string,
  id: string,
  at: Date,
  now: Date,
): Promise<Summary> {
  const ahead = at.getTime() - now.getTime();
  if (!(ahead > 0 && ahead <= SEND_AT_MAX_DAYS * 86_400_000)) {
    throw validationFailed([
      { field: 'sendAt', message: `must be a time ahead, at most ${SEND_AT_MAX_DAYS} days`, code: 'invalid_date' },
    ]);
  }
  const moved = await rescheduleQueued(db, projectId, id, at);
  const row = await findEmail(db, projectId, id);
  if (!moved) {
    throw conflict(`The email is ${row.shown_status}: only a scheduled email can be moved to another time`, {
      details: { status: row.shown_status },
    });
  }
  return toSummary(row);
}

/**
 * `POST /emails/:id/requeue`: one FAILED email queued again, with a new lifetime, refused as sending
 * refuses it (a suppressed address, MARKETING mail to an unsubscribed contact, a cancelled campaign).
 */
export async function requeueEmail(db: Queryable, projectId: string, id: string): Promise<Summary> {
  const row = await findEmail(db, projectId, id);
  if (row.status !== 'FAILED')
    throw conflict(`Only a FAILED email can be queued again; this one is ${row.shown_status}`);
  const counts = await requeueFailedEmails(db, projectId, { emailId: id });
  if (counts.requeued === 0) {
    const why = counts.refused.suppressed
      ? 'its address is suppressed'
      : counts.refused.unsubscribed
        ? 'it is marketing mail and the contact unsubscribed'
        : 'its campaign was cancelled';
    throw conflict(`This email cannot be queued again: ${why}`);
  }
  return toSummary(await findEmail(db, projectId, id));
}
