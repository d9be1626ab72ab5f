// The campaign message the sending ceilings build (bare-nodemailer.mjs, bare-durable-delivery.mjs):
// one module, so both send exactly the same message. The campaign's ~2 KB HTML rendered for the
// recipient (first name, an unsubscribe URL as long as Pigeon's), a plain-text part, the
// List-Unsubscribe headers, DKIM-signed with a parsed RSA-2048 KeyObject over Pigeon's header list.
import { createPrivateKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { CAMPAIGN_HTML, CAMPAIGN_SUBJECT, DKIM_SIGNED_HEADERS } from '../lib/campaigns.mjs';

const require = createRequire(new URL('../../packages/server/package.json', import.meta.url));

export const DOMAIN = 'bench.example';

/** nodemailer's pooled SMTP transport on `smtpUrl` (its defaults: 5 connections, as Pigeon's transport). */
export function pooledTransport(smtpUrl) {
  const nodemailer = require('nodemailer');
  const url = new URL(smtpUrl);
  url.searchParams.set('pool', 'true');
  return nodemailer.createTransport(url.toString());
}

/** A fresh RSA-2048 key, parsed once (as Pigeon caches its KeyObject). */
export function dkimKey() {
  const { privateKey: pem } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'der' },
  });
  return createPrivateKey(pem);
}

// About as long as Pigeon's signed unsubscribe URL (base64url claims + HMAC).
const unsubscribeUrl = (i) =>
  `http://127.0.0.1:3000/unsubscribe/${Buffer.from(JSON.stringify({ c: randomUUID(), e: randomUUID(), i })).toString('base64url')}.${'x'.repeat(32)}`;
const htmlToText = (html) =>
  html
    .replace(/<(head|style)[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>|<\/(p|h1|tr)>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n\s*\n+/g, '\n\n')
    .trim();

/**
 * The nodemailer message for the `i`-th recipient `to`, greeted by `firstName` (none: "there", as
 * the template's `{{firstName ?? "there"}}`), signed with `privateKey`.
 */
export function campaignMessage(i, { to, firstName, privateKey }) {
  const name = firstName ?? 'there';
  const unsubscribe = unsubscribeUrl(i);
  const html = CAMPAIGN_HTML.replaceAll('{{firstName ?? "there"}}', name).replaceAll('{{unsubscribeUrl}}', unsubscribe);
  return {
    messageId: `<${randomUUID()}@${DOMAIN}>`,
    from: { name: '', address: `hello@${DOMAIN}` },
    to: { name: '', address: to },
    subject: CAMPAIGN_SUBJECT.replace('{{firstName ?? "there"}}', name),
    html,
    text: htmlToText(html),
    headers: { 'List-Unsubscribe': `<${unsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    dkim: { domainName: DOMAIN, keySelector: 'bench', privateKey, headerFieldNames: DKIM_SIGNED_HEADERS },
  };
}
