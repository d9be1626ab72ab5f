import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Joiner, type MimeNode, Rewriter, Splitter } from '@zone-eu/mailsplit';
import iconv from 'iconv-lite';
import { addTracking } from '../engagement/tracking.js';

export interface BuiltMessageSettings {
  publicUrl: string;
  linkSecret: string;
  tracked: boolean;
}

/** What one recipient gets of a message its sender built: the bytes, and the HTML as `GET /emails` shows it. */
export interface ComposedBuiltMessage {
  mime: Buffer;
  html: string;
}

/**
 * Composition of a message its sender built (SMTP submission) for one email: its headers, MIME
 * structure and attachments stay as they are. Tracked, every HTML body part (not an attachment, not
 * inside an attached message) gets the open pixel and click redirects of this email, re-encoded as
 * UTF-8 in its own transfer encoding; its text parts are left alone (their links are the sender's
 * own words, not markup Pigeon can rewrite safely). Template variables are never filled in.
 */
export async function composeBuiltMessage(
  mime: Buffer,
  html: string,
  emailId: string,
  settings: BuiltMessageSettings,
): Promise<ComposedBuiltMessage> {
  if (!settings.tracked) return { mime, html };
  const tracking = { publicUrl: settings.publicUrl, secret: settings.linkSecret, emailId, clicks: new Map() };
  const track = (text: string) => addTracking(text, tracking);
  return { mime: await rewriteHtmlParts(mime, track), html: html && track(html) };
}

const isBodyHtml = (node: MimeNode) => {
  if (node.contentType !== 'text/html' || node.disposition === 'attachment') return false;
  for (let parent = node.parentNode; parent; parent = parent.parentNode) if (parent.rfc822) return false;
  return true;
};

async function rewriteHtmlParts(mime: Buffer, rewrite: (html: string) => string): Promise<Buffer> {
  const rewriter = new Rewriter(isBodyHtml);
  rewriter.on('node', ({ node, decoder, encoder }) => {
    const chunks: Buffer[] = [];
    decoder.on('data', (chunk: Buffer) => chunks.push(chunk));
    decoder.on('end', () => {
      const charset = node.charset && iconv.encodingExists(node.charset) ? node.charset : 'utf-8';
      node.setCharset('utf-8');
      encoder.end(Buffer.from(rewrite(iconv.decode(Buffer.concat(chunks), charset)), 'utf8'));
    });
  });
  const out: Buffer[] = [];
  await pipeline(
    Readable.from([mime]),
    new Splitter(),
    rewriter,
    new Joiner(),
    async (joined: AsyncIterable<Buffer>) => {
      for await (const chunk of joined) out.push(chunk);
    },
  );
  return Buffer.concat(out);
}
