import type { InboundEmail, InboundEmailQuery } from '@pigeon/contract';
import type { z } from 'zod';
import { queryRows, sql } from '../../db/query.js';
import type { AppDeps } from '../../deps.js';
import { notFound } from '../../kit/errors.js';
import { attachmentUrl } from './attachments.js';

interface EmailRow {
  id: string;
  route_id: string | null;
  contact_id: string | null;
  message_id: string | null;
  from_email: string;
  from_name: string | null;
  to_emails: string[];
  cc_emails: string[];
  subject: string;
  text: string | null;
  html: string | null;
  headers: { name: string; value: string }[];
  auth: { spf: string; dkim: string; dmarc: string };
  attachments: { filename: string | null; contentType: string; size: number }[];
  reply_email_id: string | null;
  reply_contact_id: string | null;
  reply_by: 'header' | 'address' | null;
  created_at: Date;
  content_days: number;
  has_raw: boolean;
}

function toInboundEmail(deps: AppDeps, row: EmailRow): z.infer<typeof InboundEmail> {
  const expires = row.created_at.getTime() + row.content_days * 86_400_000;
  return {
    id: row.id,
    routeId: row.route_id,
    contactId: row.contact_id,
    messageId: row.message_id,
    from: { email: row.from_email, name: row.from_name },
    to: row.to_emails,
    cc: row.cc_emails,
    subject: row.subject,
    text: row.text,
    html: row.html,
    headers: row.headers,
    auth: row.auth,
    // Without the stored message (content retention) there is nothing left to download.
    attachments: row.has_raw
      ? row.attachments.map((a, n) => ({ ...a, url: attachmentUrl(deps, row.id, n, expires) }))
      : [],
    inReplyTo:
      row.reply_email_id && row.reply_by
        ? { emailId: row.reply_email_id, contactId: row.reply_contact_id, by: row.reply_by }
        : null,
    receivedAt: row.created_at.toISOString(),
  };
}

const columns = sql`e.id, e.route_id, e.contact_id, e.message_id, e.from_email, e.from_name, e.to_emails, e.cc_emails,
  e.subject, e.text, e.html, e.headers, e.auth, e.attachments, e.reply_email_id, e.reply_contact_id, e.reply_by,
  e.created_at, p.retention_content_days AS content_days, e.raw IS NOT NULL AS has_raw`;

export async function listInboundEmails(deps: AppDeps, projectId: string, query: z.infer<typeof InboundEmailQuery>) {
  const rows = await queryRows<EmailRow>(
    deps.db.pool,
    sql`SELECT ${columns} FROM inbound_emails e JOIN projects p ON p.id = e.project_id
        WHERE e.project_id = ${projectId}::uuid
          AND (${query.routeId ?? null}::uuid IS NULL OR e.route_id = ${query.routeId ?? null}::uuid)
          AND (${query.before ?? null}::uuid IS NULL OR e.id < ${query.before ?? null}::uuid)
        ORDER BY e.id DESC LIMIT ${query.limit}`,
  );
  return { data: rows.map((r) => toInboundEmail(deps, r)) };
}

export async function getInboundEmail(deps: AppDeps, projectId: string, id: string) {
  const [row] = await queryRows<EmailRow>(
    deps.db.pool,
    sql`SELECT ${columns} FROM inbound_emails e JOIN projects p ON p.id = e.project_id
        WHERE e.id = ${id}::uuid AND e.project_id = ${projectId}::uuid`,
  );
  if (!row) throw notFound('Inbound email');
  return toInboundEmail(deps, row);
}
