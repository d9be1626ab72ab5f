import { type BodyFormat, type ContentType, SEND_AT_MAX_DAYS, type SendBody, type SendResult } from '@pigeon/contract';
import { uuidv7 } from 'uuidv7';
import type { z } from 'zod';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { type AppErrorExtra, validationFailed } from '../../http/errors.js';
import { requireAllowance } from '../billing/allowance.js';
import { composeMessage } from '../composition/compose.js';
import { applyDataRules } from '../contacts/data-rules.js';
import { upsertContact } from '../contacts/repository.js';
import { suppressedAmong } from '../deliverability/suppressions.js';
import { requireVerifiedSender, type VerifiedSender } from '../domains/service.js';
import { shouldTrack } from '../engagement/tracking.js';
import { markdownToHtml } from '../rendering/markdown.js';
import { findTemplate } from '../templates/service.js';
import { PRIORITY, queueEmail } from './queue.js';

type SendInput = z.output<typeof SendBody>;
type FieldErrors = NonNullable<AppErrorExtra['errors']>;

/** Headers Pigeon sets itself; a custom header may not replace them. */
const RESERVED_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'reply-to',
  'sender',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'dkim-signature',
  'return-path',
  'list-unsubscribe',
  'list-unsubscribe-post',
  'feedback-id',
]);
/** No `from`, none in the template, and no project default: say how to fix it either way. */
const MISSING_FROM = {
  field: 'from',
  message:
    'Required unless the template has a sender or the project has a default sender: send `from`, or set `defaultFrom` (an address on a verified domain) with PATCH /users/@me/projects/:id',
  code: 'invalid_type',
};
const WHOLE_MESSAGE_LIMIT = 40 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/\r\n]*={0,2}$/;

interface Resolved {
  subject: string;
  html: string;
  from: { email: string; name: string | null };
  replyTo: string | null;
  type: ContentType;
  templateId: string | null;
  attachments: Array<{ filename: string; content: string; contentType?: string }>;
  sender: VerifiedSender;
}

/** Everything that can be wrong with the request is found before anything is stored or sent. */
async function resolveContent(deps: AppDeps, projectId: string, body: SendInput): Promise<Resolved> {
  const template = body.template ? await findTemplate(deps.db.pool, projectId, body.template) : undefined;
  const errors: FieldErrors = [];
  const subject = body.subject ?? template?.subject;
  const html = body.body === undefined ? template?.body : await bodyHtml(body.body, body.type);
  if (!subject) errors.push({ field: 'subject', message: 'Required unless a template gives it', code: 'invalid_type' });
  if (!html) errors.push({ field: 'body', message: 'Required unless a template gives it', code: 'invalid_type' });
  const fromEmail =
    (typeof body.from === 'object' ? body.from.email : body.from) ??
    template?.from_email ??
    (await projectDefaultFrom(deps.db.pool, projectId));
  if (!fromEmail) errors.push(MISSING_FROM);
  for (const name of Object.keys(body.headers ?? {})) {
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      errors.push({
        field: `headers.${name}`,
        message: `${name} is set by Pigeon and cannot be overridden`,
        code: 'reserved_header',
      });
    }
  }
  const attachments = body.attachments ?? [];
  let attachmentBytes = 0;
  attachments.forEach((a, i) => {
    if (!BASE64.test(a.content))
      errors.push({ field: `attachments.${i}.content`, message: 'must be base64', code: 'invalid_string' });
    attachmentBytes += Math.floor((a.content.replace(/[\r\n=]/g, '').length * 3) / 4);
  });
  if (attachmentBytes > deps.config.delivery.attachmentLimitBytes) {
    errors.push({
      field: 'attachments',
      message: `attachments exceed ${deps.config.delivery.attachmentLimitBytes} bytes in total`,
      code: 'too_big',
    });
  }
  if ((html?.length ?? 0) * 2 + (attachmentBytes * 4) / 3 > WHOLE_MESSAGE_LIMIT) {
    errors.push({ field: '(body)', message: 'the whole message would exceed 40 MB', code: 'too_big' });
  }
  if (errors.length > 0 || !subject || !html || !fromEmail) {
    // Clients written for Plunk show only the top-level message: make it say how to fix a missing sender.
    throw validationFailed(errors, fromEmail ? undefined : `No sender: ${MISSING_FROM.message}`);
  }
  const sender = await requireVerifiedSender(deps.db.pool, projectId, fromEmail);
  const fromName =
    typeof body.from === 'object' ? (body.from.name ?? null) : (body.name ?? template?.from_name ?? null);
  return {
    subject,
    html,
    from: { email: fromEmail, name: fromName },
    replyTo: body.reply ?? template?.reply_to ?? null,
    type: template?.type ?? 'TRANSACTIONAL',
    templateId: template?.id ?? null,
    attachments,
    sender,
  };
}

/** `sendAt` within the documented horizon; a time already past sends now (null). */
function scheduledTime(sendAt: string | undefined): Date | null {
  if (sendAt === undefined) return null;
  const at = new Date(sendAt);
  if (at.getTime() - Date.now() > SEND_AT_MAX_DAYS * 86_400_000) {
    throw validationFailed([
      { field: 'sendAt', message: `must be at most ${SEND_AT_MAX_DAYS} days ahead`, code: 'too_big', received: sendAt },
    ]);
  }
  return at.getTime() > Date.now() ? at : null;
}

const bodyHtml = async (body: string, format: BodyFormat | undefined) =>
  format === 'markdown' ? await markdownToHtml(body) : body;

/** The project's `defaultFrom` (checked to be on a verified domain when it was set, and again at send). */
async function projectDefaultFrom(db: Queryable, projectId: string): Promise<string | undefined> {
  const rows = await queryRows<{ default_from: string | null }>(
    db,
    sql`SELECT default_from FROM projects WHERE id = ${projectId}`,
  );
  return rows[0]?.default_from ?? undefined;
}

const recipientsOf = (to: SendInput['to']) =>
  (Array.isArray(to) ? to : [to]).map((r) =>
    typeof r === 'string' ? { email: r, name: null } : { email: r.email, name: r.name ?? null },
  );

/**
 * POST /v1/send: for each recipient in turn, upsert the contact (new ones unsubscribed unless
 * told), skip (and list) suppressed addresses and MARKETING mail to unsubscribed contacts, render,
 * and store a QUEUED email — all in one transaction, so either every recipient is queued or none is
 * (a request that would pass the monthly transactional cap queues none: 403). Delivery happens in
 * the workers, woken by NOTIFY on commit.
 */
export async function sendEmail(deps: AppDeps, projectId: string, body: SendInput) {
  const sendAt = scheduledTime(body.sendAt);
  const content = await resolveContent(deps, projectId, body);
  const tracked = shouldTrack(content.sender.trackingMode, content.type, body.tracking);
  const changes = applyDataRules(body.data, { storeObjects: false });
  const emails: Array<{ contact: { id: string; email: string }; email: string }> = [];
  const skipped: z.output<typeof SendResult>['skipped'] = [];
  const recipients = recipientsOf(body.to);
  const suppressed = await suppressedAmong(
    deps.db.pool,
    projectId,
    recipients.map((r) => r.email),
  );
  await inTransaction(deps.db.pool, async (client) => {
    for (const recipient of recipients) {
      const { contact } = await upsertContact(client, {
        projectId,
        email: recipient.email,
        subscribed: body.subscribed,
        subscribedIfNew: false,
        changes,
        source: 'send',
      });
      const ref = { id: contact.id, email: contact.email };
      const suppression = suppressed.get(contact.email);
      if (suppression) {
        skipped.push({ contact: ref, reason: 'suppressed', suppression });
        continue;
      }
      if (content.type === 'MARKETING' && !contact.subscribed) {
        skipped.push({ contact: ref, reason: 'unsubscribed' });
        continue;
      }
      const emailId = uuidv7();
      const message = composeMessage(content, contact, { ...contact.data, ...changes.transient }, emailId, {
        publicUrl: deps.config.http.publicUrl,
        linkSecret: deps.config.secrets.linkSigning,
        tracked,
        unsubscribeMailbox: content.sender.unsubscribeMailbox,
        headers: body.headers,
      });
      await queueEmail(client, {
        id: emailId,
        projectId,
        contactId: contact.id,
        templateId: content.templateId,
        type: content.type,
        priority: PRIORITY.transactional,
        from: content.from,
        replyTo: content.replyTo,
        to: { email: contact.email, name: recipient.name },
        subject: message.subject,
        html: message.html,
        text: message.text,
        headers: message.headers,
        attachments: content.attachments,
        tracked,
        sendAt,
      });
      emails.push({ contact: ref, email: emailId });
    }
    // Last, so the month's counter is locked only until the commit; over the cap, nothing is kept.
    await requireAllowance(client, projectId, 'transactional', emails.length);
  });
  return { emails, skipped, timestamp: new Date().toISOString() };
}
