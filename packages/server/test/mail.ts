import { decodeQuotedPrintable } from './accounts.js';
import type { ReceivedMessage, SmtpSink } from './smtp-sink.js';

/** A received message, taken apart enough for tests to follow its links like a recipient would. */
export interface ParsedMessage {
  raw: string;
  /** Header values by lower-case name, unfolded. */
  headers: Map<string, string>;
  /** The whole message with quoted-printable undone and HTML entities in links left as sent. */
  text: string;
}

export function parseMessage(raw: string): ParsedMessage {
  const headerEnd = raw.search(/\r?\n\r?\n/);
  const headers = new Map<string, string>();
  for (const line of raw
    .slice(0, headerEnd)
    .replace(/\r?\n[ \t]+/g, ' ')
    .split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  return { raw, headers, text: decodeQuotedPrintable(raw) };
}

/** Waits for the first message the sink accepts that `matches`. */
async function arrival(sink: SmtpSink, matches: (m: ReceivedMessage) => boolean, what: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = sink.messages.find(matches);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`${what} not received`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Waits for the message with this Message-ID to reach the sink. */
export async function receivedMessage(sink: SmtpSink, messageId: string, timeoutMs = 15_000): Promise<ParsedMessage> {
  const found = await arrival(sink, (m) => m.messageId === messageId, `message ${messageId}`, timeoutMs);
  return parseMessage(found.raw);
}

/**
 * Waits for the mail Pigeon sent for the email `emailId` (its Message-ID is `<emailId@domain>`).
 * Tests find their mail this way rather than by counting: a shared sink also gets the late mail
 * of the tests before.
 */
export function mailOf(sink: SmtpSink, emailId: string, timeoutMs = 15_000): Promise<ReceivedMessage> {
  return arrival(sink, (m) => m.messageId?.startsWith(`<${emailId}@`) === true, `mail of email ${emailId}`, timeoutMs);
}

/** Every `href="…"` of the HTML part, in order, with `&amp;` undone as a browser would. */
export const hrefs = (message: ParsedMessage) =>
  [...message.text.matchAll(/href="([^"]+)"/g)].map((m) => (m[1] ?? '').replace(/&amp;/g, '&'));

/** The `src` of the open pixel, if the message has one. */
export const pixelUrl = (message: ParsedMessage) => /<img src="([^"]+\/t\/o\/[^"]+)"/.exec(message.text)?.[1];
