import { createHash } from 'node:crypto';
import { SendBody } from '@pigeon/contract';
import { Headers } from '@zone-eu/mailsplit';
import type { AddressObject, ParsedMail } from 'mailparser';
import { uuidv7 } from 'uuidv7';
import type { z } from 'zod';
import { unsafeFields } from '../../http/validation.js';
import type { BuiltMessage } from '../emails/send.js';
import { SmtpReply } from './replies.js';

/** The header section of a submitted message at most (Postfix's `header_size_limit` is 100 KB). */
export const MAX_HEADER_BYTES = 64 * 1024;

/** A submitted message as the send path takes it. */
export interface Submission {
  /** What `POST /v1/send` would have been given: envelope recipients, From, Subject, the HTML and text. */
  body: z.output<typeof SendBody>;
  built: BuiltMessage;
  /** The sender wrote the Message-ID (a retry is recognised only then; one Pigeon adds is new each time). */
  ownMessageId: boolean;
  /** Digest of the envelope recipients and the bytes: a retry has the same, another message under its Message-ID not. */
  hash: string;
}

/**
 * Reads a message submitted over SMTP (DATA, after dot-unstuffing) for its envelope recipients.
 * The message itself goes out as written (headers, MIME structure, attachments) but for what a
 * submission server owes it (RFC 6409 §8): `Bcc` removed, a `Message-ID` and a `Date` added when
 * missing. Refused with a 5xx when it has no single From address or carries text no mail may.
 */
export async function readSubmission(raw: Buffer, recipients: string[]): Promise<Submission> {
  const { headEnd, bodyStart } = headerSection(raw);
  if (headEnd > MAX_HEADER_BYTES) {
    throw new SmtpReply(552, `5.3.4 Header section over ${MAX_HEADER_BYTES / 1024} KB`);
  }
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(raw, {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
  });
  const from = singleFrom(parsed);
  const body = requestOf(parsed, from, recipients);
  const headers = new Headers(raw.subarray(0, headEnd));
  headers.remove('bcc');
  const ownMessageId = headers.hasHeader('message-id') && Boolean(parsed.messageId);
  const messageId = ownMessageId ? (parsed.messageId as string) : `<${uuidv7()}@${from.address.split('@')[1]}>`;
  if (!ownMessageId) headers.update('Message-ID', messageId);
  if (!headers.hasHeader('date')) headers.update('Date', new Date().toUTCString().replace('GMT', '+0000'));
  const mime = headers.changed ? Buffer.concat([headers.build(), raw.subarray(bodyStart)]) : raw;
  return { body, built: { mime, messageId }, ownMessageId, hash: digest(recipients, raw) };
}

/** Where the header section ends (before its blank line) and the body starts; a message of headers only ends at its end. */
function headerSection(raw: Buffer): { headEnd: number; bodyStart: number } {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (crlf !== -1 && (lf === -1 || crlf < lf)) return { headEnd: crlf, bodyStart: crlf + 4 };
  if (lf !== -1) return { headEnd: lf, bodyStart: lf + 2 };
  return { headEnd: raw.length, bodyStart: raw.length };
}

function singleFrom(parsed: ParsedMail): { address: string; name: string } {
  const mailboxes = parsed.from?.value ?? [];
  const [first] = mailboxes;
  if (mailboxes.length !== 1 || !first?.address) {
    throw new SmtpReply(550, '5.6.0 The message needs a From header with exactly one address');
  }
  return { address: first.address, name: first.name };
}

/** The send request the message stands for, checked by the contract's own schema of `/v1/send`. */
function requestOf(parsed: ParsedMail, from: { address: string; name: string }, recipients: string[]) {
  const names = displayNames(parsed.to, parsed.cc);
  const candidate = {
    to: recipients.map((email) => ({ email, ...nameOf(names.get(email)) })),
    from: { email: from.address, ...nameOf(from.name) },
    ...(parsed.subject ? { subject: parsed.subject } : {}),
    ...(typeof parsed.html === 'string' && parsed.html ? { body: parsed.html } : {}),
    // Display copies: the bytes that go out are the message's own.
    ...(parsed.text?.trimEnd() ? { text: parsed.text.trimEnd() } : {}),
  };
  const [unsafe] = unsafeFields(candidate);
  if (unsafe) throw new SmtpReply(550, `5.6.0 ${headerName(unsafe.field)}: ${unsafe.message}`);
  const checked = SendBody.safeParse(candidate);
  if (!checked.success) {
    const [issue] = checked.error.issues;
    throw new SmtpReply(550, `5.6.0 ${headerName(issue?.path.join('.') ?? '')}: ${issue?.message ?? 'not valid'}`);
  }
  return checked.data;
}

/** A request field named as the message has it. */
const headerName = (field: string) =>
  ({ 'from.email': 'From', 'from.name': 'From', subject: 'Subject', body: 'HTML part', text: 'Text part' })[field] ??
  (field.startsWith('to') ? 'Recipient' : field);

/** Display names (at most the contract's 200 characters) are cosmetic: cut, never a refusal. */
const nameOf = (name: string | undefined) => (name ? { name: name.slice(0, 200) } : {});

function displayNames(...fields: Array<AddressObject | AddressObject[] | undefined>): Map<string, string> {
  const names = new Map<string, string>();
  for (const field of fields.flatMap((f) => (f === undefined ? [] : Array.isArray(f) ? f : [f]))) {
    for (const mailbox of field.value) {
      if (mailbox.address && mailbox.name) names.set(mailbox.address.toLowerCase(), mailbox.name);
    }
  }
  return names;
}

const digest = (recipients: string[], raw: Buffer) =>
  createHash('sha256')
    .update([...recipients].sort().join('\n'))
    .update('\n\n')
    .update(raw)
    .digest('base64url');
