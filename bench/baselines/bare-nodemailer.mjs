// Bare nodemailer baseline of campaign-100k (a timed-task baseline, not an HTTP server like
// bare-http.mjs: lib/campaigns.mjs runBareNodemailer starts one or more of these at once).
// Sends COUNT messages into SMTP_URL over a pooled transport (nodemailer's defaults: 5 connections,
// as Pigeon's transport), IN_FLIGHT sendMail calls at a time, each DKIM-signed (RSA-2048, a parsed
// KeyObject from crypto.createPrivateKey, the same header list as Pigeon) and carrying the
// campaign's ~2 KB HTML rendered for the recipient (first name, an unsubscribe URL as long as
// Pigeon's), a plain-text part and List-Unsubscribe headers (the message of _campaign-message.mjs,
// which bare-durable-delivery.mjs sends too). No database, no tracking, no queue.
// Starts at START_AT (epoch ms, so several processes start together), then prints one line
//   result {"sent":…,"failed":…,"startAt":…,"endAt":…,"seconds":…,"messagesPerSec":…,…}
// (`machineAtStart`/`machineAtEnd`: the whole machine's busy CPU seconds, /proc/stat, at both ends)
// and exits.
import { machineBusyCpuSeconds } from '../lib/process.mjs';
import { campaignMessage, dkimKey, pooledTransport } from './_campaign-message.mjs';

const COUNT = Number(process.env.COUNT ?? 10_000);
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 4);
const START_AT = Number(process.env.START_AT ?? Date.now());
const INDEX = process.env.PROCESS_INDEX ?? '1';
if (!process.env.SMTP_URL) throw new Error('SMTP_URL is required');

const privateKey = dkimKey();
const transporter = pooledTransport(process.env.SMTP_URL);
const message = (i) =>
  campaignMessage(i, {
    to: `b${INDEX}-${i}@baseline.example`,
    firstName: i % 4 === 0 ? null : `Name${i}`,
    privateKey,
  });

await new Promise((r) => setTimeout(r, Math.max(0, START_AT - Date.now())));
const cpu0 = process.cpuUsage();
const machineAtStart = machineBusyCpuSeconds();
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
const machineAtEnd = machineBusyCpuSeconds();
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
    machineAtStart,
    machineAtEnd,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  })}`,
);
process.exit(0);
