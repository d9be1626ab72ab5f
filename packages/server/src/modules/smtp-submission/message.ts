import { createHash } from 'node:crypto';
import { SendBody } from '@pigeon/contract';
import { Headers } from '@zone-eu/mailsplit';
import addressparser from 'nodemailer/lib/addressparser/index.js';
import { uuidv7 } from 'uuidv7';
import type { z } from 'zod';
import { unsafeFields } from '../../kit/validation.js';
import { takeApart } from '../composition/public.js';
import type { BuiltMessage } from '../emails/public.js';
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

/** mailsplit's headers carry libmime, whose word decoder (RFC 2047) names and subjects need. */
type DecodingHeaders = Headers & { libmime: { decodeWords(text: string): string } };

/**
 * Reads a message submitted over SMTP (DATA, after dot-unstuffing) for its envelope recipients.
 * The message itself goes out as written (headers, MIME structure, attachments) but for what a
 * submission server owes it (RFC 6409 §8): `Bcc` removed, a `Message-ID` and a `Date` added when
 * missing. Refused with a 5xx when it has no single From address or carries text no mail may.
 */
export function readSubmission(raw: Buffer, recipients: string[]): Submission {
  const { headEnd, bodyStart } = headerSection(raw);
  if (headEnd > MAX_HEADER_BYTES) {
    throw new SmtpReply(552, `5.3.4 Header section over ${MAX_HEADER_BYTES / 1024} KB`);
  }
  const headers = new Headers(raw.subarray(0, headEnd)) as DecodingHeaders;
  const from = singleFrom(headers);
  headers.remove('bcc');
  const given = /<[^<>\s]+>/.exec(headers.getFirst('message-id'))?.[0];
  const messageId = given ?? `<${uuidv7()}@${from.address.split('@')[1]}>`;
  if (!given) headers.update('Message-ID', messageId);
  if (!headers.hasHeader('date')) headers.update('Date', new Date().toUTCString().replace('GMT', '+0000'));
  const mime = headers.changed ? Buffer.concat([headers.build(), raw.subarray(bodyStart)]) : raw;
  const layout = takeApart(mime);
  const body = requestOf(headers, from, recipients, layout);
  return { body, built: { layout, messageId }, ownMessageId: given !== undefined, hash: digest(recipients, raw) };
}

/** Where the header section ends (before its blank line) and the body starts; a message of headers only ends at its end. */
function headerSection(raw: Buffer): { headEnd: number; bodyStart: number } {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (crlf !== -1 && (lf === -1 || crlf < lf)) return { headEnd: crlf, bodyStart: crlf + 4 };
  if (lf !== -1) return { headEnd: lf, bodyStart: lf + 2 };
  return { headEnd: raw.length, bodyStart: raw.length };
}

function singleFrom(headers: DecodingHeaders): { address: string; name: string } {
  const lines = headers.get('from');
  const mailboxes = lines.length === 1 ? addressparser(fieldValue(lines[0] ?? ''), { flatten: true }) : [];
  const [first] = mailboxes;
  if (mailboxes.length !== 1 || !first?.address) {
    throw new SmtpReply(550, '5.6.0 The message needs a From header with exactly one address');
  }
  return { address: first.address, name: headers.libmime.decodeWords(first.name) };
}

/** A header line's value, unfolded. */
const fieldValue = (line: string) =>
  line
    .slice(line.indexOf(':') + 1)
    .replace(/\r?\n[ \t]*/g, ' ')
    .trim();

/** The send request the message stands for, checked by the contract's own schema of `/v1/send`. */
function requestOf(
  headers: DecodingHeaders,
  from: { address: string; name: string },
  recipients: string[],
  content: { html: string; text: string },
) {
  const names = displayNames(headers);
  const subject = headers.libmime.decodeWords(headers.getFirst('subject'));
  const text = content.text.trimEnd(); // display copies: the bytes that go out are the message's own
  const candidate = {
    to: recipients.map((email) => ({ email, ...nameOf(names.get(email)) })),
    from: { email: from.address, ...nameOf(from.name) },
    ...(subject ? { subject } : {}),
    ...(content.html ? { body: content.html } : {}),
    ...(text ? { text } : {}),
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

/** The names To and Cc give the envelope's addresses. */
function displayNames(headers: DecodingHeaders): Map<string, string> {
  const names = new Map<string, string>();
  for (const line of [...headers.get('to'), ...headers.get('cc')]) {
    for (const mailbox of addressparser(fieldValue(line), { flatten: true })) {
      if (mailbox.address && mailbox.name)
        names.set(mailbox.address.toLowerCase(), headers.libmime.decodeWords(mailbox.name));
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
