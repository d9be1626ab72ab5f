import { type EmailDetail, SendBody } from '@pigeon/contract';
import type { ResendSendBody } from '@pigeon/contract/compat';
import type { z } from 'zod';
import { validationFailed } from '../../kit/errors.js';
import { zodIssuesToFieldErrors } from '../../kit/validation.js';

type ResendMessage = Omit<ResendSendBody, 'scheduled_at' | 'attachments'> & Partial<ResendSendBody>;
type Attachment = NonNullable<ResendSendBody['attachments']>[number];

const list = (value: string | string[] | undefined) => (value === undefined ? [] : [value].flat());

/**
 * A Resend message as the native send body (`POST /v1/send`'s): checked by its schema, so that
 * what the send path receives is what it would receive from `/v1/send`.
 */
export function toNativeSend(message: ResendMessage, prefix = ''): z.output<typeof SendBody> {
  const refusals = [...replyToRefusal(message.reply_to), ...(message.attachments ?? []).flatMap(attachmentRefusal)];
  if (refusals.length) throw validationFailed(refusals.map((r) => ({ ...r, field: `${prefix}${r.field}` })));
  const native = {
    from: message.from,
    to: message.to,
    subject: message.subject,
    cc: message.cc,
    bcc: message.bcc,
    reply: list(message.reply_to)[0],
    // Resend sends a text-only message; Pigeon's send path wants HTML: the text, escaped, stands for it.
    body: message.html ?? (message.text === undefined ? undefined : textAsHtml(message.text)),
    text: message.text,
    tags: message.tags && Object.fromEntries(message.tags.map((t) => [t.name, t.value])),
    headers: message.headers,
    sendAt: message.scheduled_at,
    attachments: message.attachments?.map((a) => ({
      filename: a.filename ?? '',
      content: a.content ?? '',
      contentType: a.content_type,
    })),
  };
  const parsed = SendBody.safeParse(native);
  if (!parsed.success) {
    throw validationFailed(zodIssuesToFieldErrors(parsed.error).map((e) => ({ ...e, field: `${prefix}${e.field}` })));
  }
  return parsed.data;
}

function replyToRefusal(replyTo: string | string[] | undefined) {
  if (list(replyTo).length <= 1) return [];
  return [{ field: 'reply_to', message: 'Pigeon sends one Reply-To address', code: 'too_big' }];
}

function attachmentRefusal(a: Attachment, i: number) {
  const field = `attachments.${i}`;
  if (a.path !== undefined)
    return [
      { field: `${field}.path`, message: 'Pigeon does not fetch attachments: send `content`', code: 'unsupported' },
    ];
  if (a.content_id !== undefined)
    return [{ field: `${field}.content_id`, message: 'inline attachments are not supported', code: 'unsupported' }];
  return [];
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const textAsHtml = (text: string) =>
  `<p>${text.replace(/[&<>"]/g, (c) => ESCAPES[c] as string).replace(/\r?\n/g, '<br>')}</p>`;

/** Resend's `last_event` for a native status (and the furthest engagement of a delivered email). */
function lastEvent(e: z.infer<typeof EmailDetail>): string {
  switch (e.status) {
    case 'SCHEDULED':
      return 'scheduled';
    case 'QUEUED':
    case 'SENDING':
      return 'queued';
    case 'CANCELLED':
      return 'canceled';
    case 'SENT':
    case 'DELIVERED':
      if (e.clickedAt) return 'clicked';
      if (e.openedAt) return 'opened';
      return e.status === 'SENT' ? 'sent' : 'delivered';
    default:
      return e.status.toLowerCase();
  }
}

const named = (email: string, name: string | null | undefined) => (name ? `${name} <${email}>` : email);
const addresses = (copies: Array<{ email: string; name?: string | null }>) =>
  copies.length ? copies.map((c) => named(c.email, c.name)) : null;

/** The native email (`GET /emails/:id`) in Resend's email object. */
export const toResendEmail = (e: z.infer<typeof EmailDetail>) => ({
  object: 'email' as const,
  id: e.id,
  to: [named(e.to, e.toName)],
  from: named(e.from, e.fromName),
  created_at: e.createdAt,
  subject: e.subject,
  html: e.content?.html ?? null,
  text: e.content?.text ?? null,
  cc: addresses(e.cc),
  bcc: addresses(e.bcc),
  reply_to: e.replyTo ? [e.replyTo] : null,
  last_event: lastEvent(e),
  scheduled_at: e.sendAt,
  tags: Object.entries(e.tags).map(([name, value]) => ({ name, value })),
});
