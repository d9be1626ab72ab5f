import { Headers } from '@zone-eu/mailsplit';
import iconv from 'iconv-lite';
import { addTracking, trackingOf } from '../engagement/public.js';

/** One HTML body part of a built message: as sent, and decoded for tracking. */
interface HtmlPart {
  /** The part's bytes as the sender wrote them (headers and body). */
  original: Buffer;
  /** Its headers for a rewritten body: UTF-8, base64. */
  headers: Buffer;
  html: string;
}

/**
 * A message its sender built (SMTP submission), taken apart once: its bytes in order, with each
 * HTML body part (not an attachment, not inside an attached message) cut out and decoded, so each
 * recipient's copy is put together without parsing it again.
 */
export interface BuiltLayout {
  mime: Buffer;
  pieces: Array<Buffer | HtmlPart>;
  /** For display (`GET /emails`): the first HTML and the first plain-text body part, decoded ('' when none). */
  html: string;
  text: string;
}

/** Nested multiparts deeper than this are taken as they are (their HTML is not tracked). */
const MAX_DEPTH = 20;

/**
 * Walks the MIME structure (RFC 2046 boundaries, at most `MAX_DEPTH` levels) in one synchronous
 * pass over the bytes: a streaming parser (mailparser, then mailsplit's rewriter per recipient)
 * cost ~1 ms of CPU per small message, more than the rest of the send path.
 */
export function takeApart(mime: Buffer): BuiltLayout {
  const pieces: Array<Buffer | HtmlPart> = [];
  const found: { html?: string; text?: string } = {};
  let copied = 0;
  const visit = (start: number, end: number, depth: number) => {
    const { headEnd, bodyStart } = headerSection(mime, start, end);
    const headers = new Headers(mime.subarray(start, headEnd));
    const type = contentType(headers.getFirst('content-type'));
    const boundary = type.params.boundary;
    if (type.value.startsWith('multipart/')) {
      if (boundary && depth < MAX_DEPTH)
        for (const [s, e] of parts(mime, bodyStart, end, boundary)) visit(s, e, depth + 1);
      return;
    }
    const attached = /^\s*attachment/i.test(headers.getFirst('content-disposition'));
    if (attached || (type.value !== 'text/html' && type.value !== 'text/plain')) return;
    const text = decodeBody(
      mime.subarray(bodyStart, end),
      headers.getFirst('content-transfer-encoding'),
      type.params.charset,
    );
    if (type.value === 'text/plain') {
      found.text ??= text;
      return;
    }
    found.html ??= text;
    headers.update('Content-Type', 'text/html; charset=utf-8');
    headers.update('Content-Transfer-Encoding', 'base64');
    pieces.push(mime.subarray(copied, start), {
      original: mime.subarray(start, end),
      headers: headers.build(),
      html: text,
    });
    copied = end;
  };
  visit(0, mime.length, 0);
  pieces.push(mime.subarray(copied));
  return { mime, pieces, html: found.html ?? '', text: found.text ?? '' };
}

export interface BuiltMessageSettings {
  publicUrl: string;
  trackingHost?: string | null;
  linkSecret: string;
  tracked: boolean;
}

/**
 * Composition of a built message for one email: its headers, MIME structure and attachments stay as
 * they are. Tracked, each HTML body part gets the open pixel and click redirects of this email
 * (re-encoded UTF-8, base64); text parts are left alone (their links are the sender's own words).
 * Template variables are never filled in. Answers the bytes and the HTML as `GET /emails` shows it.
 */
export function composeBuiltMessage(
  layout: BuiltLayout,
  emailId: string,
  settings: BuiltMessageSettings,
): { mime: Buffer; html: string } {
  if (!settings.tracked) return { mime: layout.mime, html: layout.html };
  const tracking = trackingOf(settings, emailId);
  const track = (html: string) => addTracking(html, tracking);
  const mime = Buffer.concat(
    layout.pieces.flatMap((p) => (Buffer.isBuffer(p) ? [p] : [p.headers, base64Lines(track(p.html))])),
  );
  return { mime, html: layout.html && track(layout.html) };
}

/** Where a part's header section ends and its body starts (a part may have no headers, or no body). */
function headerSection(mime: Buffer, start: number, end: number): { headEnd: number; bodyStart: number } {
  if (mime[start] === 0x0a) return { headEnd: start, bodyStart: start + 1 };
  if (mime[start] === 0x0d && mime[start + 1] === 0x0a) return { headEnd: start, bodyStart: start + 2 };
  const crlf = mime.indexOf('\r\n\r\n', start);
  const lf = mime.indexOf('\n\n', start);
  const at = [crlf, lf].filter((i) => i !== -1 && i < end);
  if (at.length === 0) return { headEnd: end, bodyStart: end };
  const headEnd = Math.min(...at);
  return { headEnd, bodyStart: headEnd + (headEnd === crlf ? 4 : 2) };
}

/** The byte ranges of a multipart body's parts: between `--boundary` lines, up to `--boundary--` (or the end). */
function parts(mime: Buffer, bodyStart: number, end: number, boundary: string): Array<[number, number]> {
  const delimiter = Buffer.from(`--${boundary}`);
  const ranges: Array<[number, number]> = [];
  let partStart = -1;
  for (let at = mime.indexOf(delimiter, bodyStart); at !== -1 && at < end; at = mime.indexOf(delimiter, at + 1)) {
    if (at !== bodyStart && mime[at - 1] !== 0x0a) continue;
    const after = at + delimiter.length;
    const closing = mime[after] === 0x2d && mime[after + 1] === 0x2d;
    if (!closing && after < end && !/[\r\n \t]/.test(String.fromCharCode(mime[after] ?? 0))) continue;
    if (partStart !== -1) ranges.push([partStart, lineBreakBefore(mime, at, partStart)]);
    if (closing) return ranges;
    const lineEnd = mime.indexOf(0x0a, after);
    partStart = lineEnd === -1 || lineEnd >= end ? end : lineEnd + 1;
  }
  if (partStart !== -1) ranges.push([partStart, end]);
  return ranges;
}

/** The line break before a delimiter belongs to it (RFC 2046 §5.1.1). */
function lineBreakBefore(mime: Buffer, at: number, floor: number): number {
  let cut = at;
  if (cut > floor && mime[cut - 1] === 0x0a) cut--;
  if (cut > floor && mime[cut - 1] === 0x0d) cut--;
  return cut;
}

/** `text/html; charset="utf-8"` → `{ value: 'text/html', params: { charset: 'utf-8' } }`. */
function contentType(header: string): { value: string; params: Record<string, string> } {
  const [value = '', ...rest] = header.split(';');
  const params: Record<string, string> = {};
  for (const match of rest.join(';').matchAll(/([^=\s;]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;\s]*)/g)) {
    const [, name = '', raw = ''] = match;
    params[name.toLowerCase()] = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
  }
  return { value: value.trim().toLowerCase() || 'text/plain', params };
}

function decodeBody(body: Buffer, transferEncoding: string, charset: string | undefined): string {
  const encoding = transferEncoding.trim().toLowerCase();
  const bytes =
    encoding === 'base64'
      ? Buffer.from(body.toString('latin1'), 'base64')
      : encoding === 'quoted-printable'
        ? decodeQuotedPrintable(body)
        : body;
  return iconv.decode(bytes, charset && iconv.encodingExists(charset) ? charset : 'utf-8');
}

function decodeQuotedPrintable(body: Buffer): Buffer {
  const text = body.toString('latin1').replace(/=\r?\n/g, '');
  return Buffer.from(
    text.replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
    'latin1',
  );
}

const base64Lines = (text: string) =>
  Buffer.from(
    Buffer.from(text, 'utf8')
      .toString('base64')
      .replace(/(.{76})(?=.)/g, '$1\r\n'),
  );
