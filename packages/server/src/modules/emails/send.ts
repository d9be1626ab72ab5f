import {
  type BodyFormat,
  type ContentType,
  SEND_AT_MAX_DAYS,
  type SendBody,
  type SendResult,
  type SendWarning,
} from '@pigeon/contract';
import { uuidv7 } from 'uuidv7';
import type { z } from 'zod';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { AppError, type AppErrorExtra, validationFailed } from '../../kit/errors.js';
import { requireAllowance } from '../billing/public.js';
import { type BuiltLayout, type ComposedMessage, composeBuiltMessage, composeMessage } from '../composition/public.js';
import { applyDataRules, upsertContact } from '../contacts/public.js';
import { suppressedAmong } from '../deliverability/public.js';
import { requireVerifiedSender, type VerifiedSender } from '../domains/public.js';
import { PRIORITY, type QueuedEmail, queueEmail } from '../email-states/public.js';
import { shouldTrack } from '../engagement/public.js';
import { markdownToHtml, missingVariableWarnings } from '../rendering/public.js';
import { findTemplate } from '../templates/public.js';
import { ignoredFieldWarnings, mailboxes, recipientLimitError, unknownFieldWarnings } from './send-options.js';

type SendInput = z.output<typeof SendBody>;

/**
 * A message its sender built (SMTP submission), given to the send path beside its fields (`from`,
 * `to`, `subject`, `body`, `text` read from it): everything is checked and recorded as for any send,
 * and each recipient gets these bytes, tracked when the project tracks (no template variables).
 */
export interface BuiltMessage {
  /** The MIME message as it goes out (no Bcc, Message-ID and Date present), taken apart once. */
  layout: BuiltLayout;
  /** Its `Message-ID` (`<…>`), kept on every email it makes. */
  messageId: string;
}

/** What a send queued (the `data` of `/v1/send`'s answer but its timestamp). */
export type QueuedSend = Awaited<ReturnType<typeof queueSend>>;

export interface SendOptions {
  built?: BuiltMessage;
  /**
   * Runs in the send's transaction once every email is queued: what it writes commits with them,
   * and an error it throws keeps none of them (SMTP submission records its Message-ID there).
   */
  beforeCommit?: (tx: Queryable, queued: QueuedSend) => Promise<void>;
}
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
  text?: string;
  from: { email: string; name: string | null };
  replyTo: string | null;
  type: ContentType;
  templateId: string | null;
  attachments: Array<{ filename: string; content: string; contentType?: string }>;
  sender: VerifiedSender;
}

/** Everything that can be wrong with the request is found before anything is stored or sent. */
async function resolveContent(
  deps: AppDeps,
  projectId: string,
  body: SendInput,
  built: BuiltMessage | undefined,
): Promise<Resolved> {
  const template = body.template ? await findTemplate(deps.db.pool, projectId, body.template) : undefined;
  const errors: FieldErrors = [];
  const subject = body.subject ?? template?.subject;
  const html = body.body === undefined ? template?.body : await bodyHtml(body.body, body.type);
  // A built message may have neither (RFC 5322 requires no Subject; a text-only message has no HTML).
  if (!subject && !built)
    errors.push({ field: 'subject', message: 'Required unless a template gives it', code: 'invalid_type' });
  if (!html && !built)
    errors.push({ field: 'body', message: 'Required unless a template gives it', code: 'invalid_type' });
  const fromEmail = body.from?.email ?? template?.from_email ?? (await projectDefaultFrom(deps.db.pool, projectId));
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
  if (errors.length > 0 || !fromEmail) {
    // Clients written for Plunk show only the top-level message: make it say how to fix a missing sender.
    throw validationFailed(errors, fromEmail ? undefined : `No sender: ${MISSING_FROM.message}`);
  }
  const sender = await requireVerifiedSender(deps.db.pool, projectId, fromEmail);
  // As Plunk: `from`'s name, else `name`, else the template's.
  const fromName = body.from?.name ?? body.name ?? template?.from_name ?? null;
  return {
    subject: subject ?? '',
    html: html ?? '',
    ...(body.text === undefined ? {} : { text: body.text }),
    from: { email: fromEmail, name: fromName },
    replyTo: body.reply ? replyToHeader(body.reply) : (template?.reply_to ?? null),
    type: template?.type ?? 'TRANSACTIONAL',
    templateId: template?.id ?? null,
    attachments,
    sender,
  };
}

/** Reply-To as stored with the email: the address, or `"Name" <address>` (quoted as RFC 5322 wants). */
const replyToHeader = (reply: { email: string; name?: string }) =>
  reply.name ? `"${reply.name.replace(/["\\]/g, '\\$&')}" <${reply.email}>` : reply.email;

/** `sendAt` within the documented horizon; a time already past sends now (null). */
function scheduledTime(sendAt: string | undefined, now: number): Date | null {
  if (sendAt === undefined) return null;
  const at = new Date(sendAt);
  if (at.getTime() - now > SEND_AT_MAX_DAYS * 86_400_000) {
    throw validationFailed([
      { field: 'sendAt', message: `must be at most ${SEND_AT_MAX_DAYS} days ahead`, code: 'too_big', received: sendAt },
    ]);
  }
  return at.getTime() > now ? at : null;
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

type Recipient = { email: string; name: string | null };
/** Copies (`cc`, `bcc`) become contacts without the request's `data` or `subscribed`: those are the recipient's. */
const NO_CHANGES = applyDataRules(undefined, { storeObjects: false });
type ContactRef = { id: string; email: string };
type Skipped = z.output<typeof SendResult>['skipped'][number];

/** One message checked and ready to queue: nothing about it was stored yet. */
interface PreparedSend {
  body: SendInput;
  raw: unknown;
  content: Resolved;
  to: Recipient[];
  cc: Recipient[];
  bcc: Recipient[];
  /** A scheduled send's time (null: now). */
  sendAt: Date | null;
  warnings: SendWarning[];
  built?: BuiltMessage;
}

/** Everything that can be refused about one message, before any contact or email is stored. */
async function prepareSend(
  deps: AppDeps,
  projectId: string,
  body: SendInput,
  raw: unknown,
  built?: BuiltMessage,
): Promise<PreparedSend> {
  const tooMany = recipientLimitError(body);
  if (tooMany) throw validationFailed([tooMany]);
  const sendAt = scheduledTime(body.sendAt, deps.clock.nowMs());
  const content = await resolveContent(deps, projectId, body, built);
  return {
    ...(built ? { built } : {}),
    body,
    raw,
    content,
    to: mailboxes(body.to),
    cc: mailboxes(body.cc),
    bcc: mailboxes(body.bcc),
    sendAt,
    warnings: [...unknownFieldWarnings(raw), ...ignoredFieldWarnings(body)],
  };
}

/**
 * Queues one prepared message in the caller's transaction: for each `to` recipient in turn,
 * upsert the contact (new ones unsubscribed unless told), skip (and list) suppressed addresses and
 * MARKETING mail to unsubscribed contacts, render, and store a QUEUED email carrying the `cc` and
 * `bcc` copies (each copy a contact too, skipped like a recipient). `strict` refuses any warning.
 */
async function queueSend(deps: AppDeps, client: Queryable, projectId: string, send: PreparedSend) {
  const { body, content } = send;
  const tracked = shouldTrack(content.sender.trackingMode, content.type, body.tracking);
  const changes = applyDataRules(body.data, { storeObjects: false });
  const emails: Array<{ contact: ContactRef; email: string }> = [];
  const skipped: Skipped[] = [];
  const all = [...send.to, ...send.cc, ...send.bcc];
  const suppressed = await suppressedAmong(
    client,
    projectId,
    all.map((r) => r.email),
  );
  /** The contact of a recipient, or why it gets nothing. */
  const admit = async (recipient: Recipient, contactChanges?: typeof changes) => {
    const { contact } = await upsertContact(client, {
      projectId,
      email: recipient.email,
      subscribed: contactChanges ? body.subscribed : undefined,
      subscribedIfNew: false,
      changes: contactChanges ?? NO_CHANGES,
      source: 'send',
    });
    const ref = { id: contact.id, email: contact.email };
    const suppression = suppressed.get(contact.email);
    if (suppression) skipped.push({ contact: ref, reason: 'suppressed', suppression });
    else if (content.type === 'MARKETING' && !contact.subscribed)
      skipped.push({ contact: ref, reason: 'unsubscribed' });
    else return contact;
    return undefined;
  };
  const copies = async (list: Recipient[]) => {
    const kept: Recipient[] = [];
    for (const recipient of list) if (await admit(recipient)) kept.push(recipient);
    return kept;
  };
  const [cc, bcc] = [await copies(send.cc), await copies(send.bcc)];
  const missing = new Set<string>();
  for (const recipient of send.to) {
    const contact = await admit(recipient, changes);
    if (!contact) continue;
    const emailId = uuidv7();
    const { message, built } = send.built
      ? builtFor(deps, send.built, content, emailId, tracked)
      : {
          message: composeMessage(content, contact, { ...contact.data, ...changes.transient }, emailId, {
            publicUrl: deps.config.http.publicUrl,
            trackingHost: content.sender.trackingHost,
            linkSecret: deps.config.secrets.linkSigning,
            tracked,
            unsubscribeMailbox: content.sender.unsubscribeMailbox,
            headers: body.headers,
            reportMissing: true,
          }),
          built: undefined,
        };
    for (const variable of message.missing ?? []) missing.add(variable);
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
      cc,
      bcc,
      tags: body.tags,
      subject: message.subject,
      html: message.html,
      text: message.text,
      headers: message.headers,
      attachments: content.attachments,
      tracked,
      sendAt: send.sendAt,
      built,
    });
    emails.push({ contact: { id: contact.id, email: contact.email }, email: emailId });
  }
  const warnings = [...send.warnings, ...missingVariableWarnings(missing, send.raw), ...skippedWarnings(skipped)];
  if (body.strict && warnings.length > 0) throw strictRefusal(warnings);
  return { emails, skipped, warnings };
}

/** One recipient's copy of a built message: tracked as the project tracks, never rendered. */
function builtFor(
  deps: AppDeps,
  built: BuiltMessage,
  content: Resolved,
  emailId: string,
  tracked: boolean,
): { message: ComposedMessage; built: QueuedEmail['built'] } {
  const composed = composeBuiltMessage(built.layout, emailId, {
    publicUrl: deps.config.http.publicUrl,
    trackingHost: content.sender.trackingHost,
    linkSecret: deps.config.secrets.linkSigning,
    tracked,
  });
  return {
    message: { subject: content.subject, html: composed.html, text: content.text ?? '', headers: {} },
    built: { mime: composed.mime, messageId: built.messageId },
  };
}

const skippedWarnings = (skipped: Skipped[]): SendWarning[] =>
  skipped.map((s) => ({
    code: 'recipient_skipped',
    field: s.contact.email,
    message: `${s.contact.email} was not sent to: ${s.reason === 'suppressed' ? `suppressed (${s.suppression})` : 'unsubscribed from MARKETING mail'}`,
  }));

const strictRefusal = (warnings: SendWarning[], prefix = '') =>
  validationFailed(
    warnings.map((w) => ({
      field: `${prefix}${w.code === 'unknown_field' || w.code === 'ignored_field' ? w.field : '(body)'}`,
      message: w.message,
      code: `strict_${w.code}`,
    })),
  );

/**
 * POST /v1/send: one message to its recipients, all in one transaction, so either every recipient
 * is queued or none is (a request that would pass the monthly transactional cap queues none: 403).
 * Delivery happens in the workers, woken by NOTIFY on commit. SMTP submission comes in here too,
 * with the message its sender `built` (modules/smtp-submission).
 */
export async function sendEmail(
  deps: AppDeps,
  projectId: string,
  body: SendInput,
  raw: unknown = body,
  options: SendOptions = {},
) {
  const send = await prepareSend(deps, projectId, body, raw, options.built);
  const result = await inTransaction(deps.db.pool, async (client) => {
    const queued = await queueSend(deps, client, projectId, send);
    await options.beforeCommit?.(client, queued);
    // Last, so the month's counter is locked only until the commit; over the cap, nothing is kept.
    await requireAllowance(client, projectId, 'transactional', queued.emails.length);
    return queued;
  });
  return { ...result, timestamp: deps.clock.now().toISOString() };
}

/**
 * POST /v1/send/batch, all or nothing: every message is checked first (a refusal names its index,
 * `messages.<i>.<field>`), then all are queued in one transaction; a strict message with warnings,
 * or the monthly cap, refuses the whole batch and nothing is kept.
 */
export async function sendBatch(deps: AppDeps, projectId: string, messages: SendInput[], raw: unknown[]) {
  const prepared: PreparedSend[] = [];
  for (const [index, body] of messages.entries()) {
    prepared.push(await atIndex(index, () => prepareSend(deps, projectId, body, raw[index])));
  }
  const results = await inTransaction(deps.db.pool, async (client) => {
    const queued = [];
    for (const [index, send] of prepared.entries()) {
      queued.push(await atIndex(index, () => queueSend(deps, client, projectId, send)));
    }
    await requireAllowance(
      client,
      projectId,
      'transactional',
      queued.reduce((sum, q) => sum + q.emails.length, 0),
    );
    return queued;
  });
  const timestamp = deps.clock.now().toISOString();
  return { results: results.map((r) => ({ ...r, timestamp })), timestamp };
}

/** A message's refusal, said of that message: fields under `messages.<i>.`, the message prefixed. */
async function atIndex<T>(index: number, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const prefix = `messages.${index}.`;
    const errors = err.extra.errors?.map((e) => ({ ...e, field: `${prefix}${e.field}` }));
    if (errors && err.code === 'VALIDATION_ERROR') throw validationFailed(errors);
    throw new AppError(err.kind, err.code, `messages.${index}: ${err.message}`, err.extra);
  }
}
