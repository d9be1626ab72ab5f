import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { composeBuiltMessage, takeApart } from './built.js';

const settings = { publicUrl: 'https://pigeon.test', linkSecret: 'k'.repeat(64), tracked: true };
const EMAIL = '01a24d3b-9cc3-7016-8afb-074322982ac6';
const ATTACHMENT = Buffer.from('%PDF-1.4 not really a pdf, but bytes\x00\x01\x02').toString('base64');
const lines = (...l: string[]) => Buffer.from(l.join('\r\n'), 'latin1');

/** multipart/mixed ( multipart/alternative (text, QP Latin-1 HTML), a PDF, an attached message with HTML of its own ). */
const nested = lines(
  'From: a@example.com',
  'Subject: Nested',
  'Content-Type: multipart/mixed; boundary=b',
  '',
  'This is the preamble.',
  '--b',
  'Content-Type: multipart/alternative; boundary="b1"',
  '',
  '--b1',
  'Content-Type: text/plain; charset=iso-8859-1',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  'Caf=E9 https://example.org/menu',
  '--b1',
  'Content-Type: text/html; charset="iso-8859-1"',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  '<p>Caf=E9 <a href=3D"https://example.org/menu">menu</a></p>',
  '--b1--',
  '--b',
  'Content-Type: application/pdf; name="menu.pdf"',
  'Content-Disposition: attachment; filename="menu.pdf"',
  'Content-Transfer-Encoding: base64',
  '',
  ATTACHMENT,
  '--b',
  'Content-Type: message/rfc822',
  '',
  'From: other@example.com',
  'Content-Type: text/html',
  '',
  '<a href="https://example.org/forwarded">forwarded</a>',
  '--b--',
  'The epilogue.',
  '',
);

describe('a built message taken apart', () => {
  it('finds the body parts (not attachments, not an attached message) and decodes them', () => {
    const layout = takeApart(nested);
    expect(layout.html).toBe('<p>Café <a href="https://example.org/menu">menu</a></p>');
    expect(layout.text).toBe('Café https://example.org/menu');
    expect(layout.pieces.filter((p) => !Buffer.isBuffer(p))).toHaveLength(1);
  });

  it('untracked, is sent byte for byte as written', () => {
    const layout = takeApart(nested);
    expect(composeBuiltMessage(layout, EMAIL, { ...settings, tracked: false }).mime.equals(nested)).toBe(true);
  });

  it('tracked, rewrites only the HTML body part: the structure, the other parts and the attachment stay', async () => {
    const { mime, html } = composeBuiltMessage(takeApart(nested), EMAIL, settings);
    const before = await simpleParser(nested);
    const after = await simpleParser(mime);
    expect(after.subject).toBe('Nested');
    expect(after.text).toBe(before.text);
    expect(after.html).toBe(html);
    expect(html).toMatch(
      /^<p>Café <a href="https:\/\/pigeon\.test\/t\/c\/[^"]+">menu<\/a><\/p><img src="https:\/\/pigeon\.test\/t\/o\/[^"]+\.gif"/,
    );
    expect(after.attachments.map((a) => [a.contentType, a.filename, a.content.toString('base64')])).toEqual(
      before.attachments.map((a) => [a.contentType, a.filename, a.content.toString('base64')]),
    );
    const text = mime.toString('latin1');
    expect(text).toContain('This is the preamble.\r\n--b\r\n');
    expect(text).toContain('<a href="https://example.org/forwarded">forwarded</a>\r\n--b--\r\nThe epilogue.');
    expect(text).toMatch(
      /--b1\r\nContent-Type: text\/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n[A-Za-z0-9+/=\r\n]+\r\n--b1--/,
    );
  });

  it('takes a boundary that starts like another for what it is, LF line ends, and a missing closing delimiter', () => {
    const layout = takeApart(
      Buffer.from(
        [
          'Content-Type: multipart/alternative; boundary="b"',
          '',
          '--b',
          'Content-Type: text/plain',
          '',
          'plain --b1 and a line',
          '--b1',
          '--b',
          'Content-Type: text/html',
          '',
          '<b>html</b>',
        ].join('\n'),
      ),
    );
    expect(layout.text).toBe('plain --b1 and a line\n--b1');
    expect(layout.html).toBe('<b>html</b>');
  });

  it('tracks a message that is one HTML part (its own headers rewritten for UTF-8 and base64), and base64 HTML', async () => {
    const html = Buffer.from('<p><a href="https://example.org/a">a</a></p>').toString('base64');
    const single = lines(
      'From: a@example.com',
      'Content-Type: text/html',
      'Content-Transfer-Encoding: base64',
      '',
      html,
      '',
    );
    const { mime } = composeBuiltMessage(takeApart(single), EMAIL, settings);
    const parsed = await simpleParser(mime);
    expect(parsed.from?.text).toBe('a@example.com');
    expect(parsed.html).toMatch(/<a href="https:\/\/pigeon\.test\/t\/c\/[^"]+">a<\/a>/);
  });
});
