// Bare nodemailer baseline of campaign-100k (a timed-task baseline, not an HTTP server like
// bare-http.mjs: lib/campaigns.mjs runBareNodemailer starts one or more of these at once).
// Sends COUNT messages into SMTP_URL over a pooled transport (nodemailer's defaults: 5 connections,
// as Pigeon's transport), IN_FLIGHT sendMail calls at a time, each DKIM-signed (RSA-2048, a parsed
// KeyObject from crypto.createPrivateKey, the same header list as Pigeon) and carrying the
// campaign's ~2 KB HTML rendered for the recipient (first name, an unsubscribe URL as long as
// Pigeon's), a plain-text part and List-Unsubscribe headers. No database, no tracking, no queue.
// Starts at START_AT (epoch ms, so several processes start together), then prints one line
//   result {"sent":…,"failed":…,"startAt":…,"endAt":…,"seconds":…,"messagesPerSec":…,…}
// and exits.
import { createPrivateKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { CAMPAIGN_HTML, CAMPAIGN_SUBJECT, DKIM_SIGNED_HEADERS } from '../lib/campaigns.mjs';

const require = createRequire(new URL('../../packages/server/package.json', import.meta.url));
const nodemailer = require('nodemailer');

const COUNT = Number(process.env.COUNT ?? 10_000);
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 4);
const START_AT = Number(process.env.START_AT ?? Date.now());
const INDEX = process.env.PROCESS_INDEX ?? '1';
const DOMAIN = 'bench.example';
if (!process.env.SMTP_URL) throw new Error('SMTP_URL is required');

const { privateKey: pem } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'der' },
});
const privateKey = createPrivateKey(pem);

const url = new URL(process.env.SMTP_URL);
url.searchParams.set('pool', 'true');
const transporter = nodemailer.createTransport(url.toString());

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

function message(i) {
  const name = i % 4 === 0 ? 'there' : `Name${i}`;
  const unsubscribe = unsubscribeUrl(i);
  const html = CAMPAIGN_HTML.replaceAll('{{firstName ?? "there"}}', name).replaceAll('{{unsubscribeUrl}}', unsubscribe);
  return {
    messageId: `<${randomUUID()}@${DOMAIN}>`,
    from: { name: '', address: `hello@${DOMAIN}` },
    to: { name: '', address: `b${INDEX}-${i}@baseline.example` },
    subject: CAMPAIGN_SUBJECT.replace('{{firstName ?? "there"}}', name),
    html,
    text: htmlToText(html),
    headers: { 'List-Unsubscribe': `<${unsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    dkim: { domainName: DOMAIN, keySelector: 'bench', privateKey, headerFieldNames: DKIM_SIGNED_HEADERS },
  };
}

await new Promise((r) => setTimeout(r, Math.max(0, START_AT - Date.now())));
const cpu0 = process.cpuUsage();
const startAt = Date.now();
let next = 0;
let sent = 0;
let failed = 0;
let firstError;
await Promise.all(
  Array.from({ length: IN_FLIGHT }, async () => {
    while (next < COUNT) {
      const i = next++;
      try {
        await transporter.sendMail(message(i));
        sent++;
      } catch (err) {
        failed++;
        firstError ??= err.message;
      }
    }
  }),
);
const endAt = Date.now();
const cpu = process.cpuUsage(cpu0);
transporter.close();
const seconds = (endAt - startAt) / 1000;
console.log(
  `result ${JSON.stringify({
    sent,
    failed,
    firstError,
    startAt,
    endAt,
    seconds,
    messagesPerSec: sent / seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  })}`,
);
process.exit(0);
