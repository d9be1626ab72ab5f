// The same-work ceiling of campaign-100k (a timed-task baseline, like bare-nodemailer.mjs; started
// by lib/campaigns.mjs runDurableDelivery, several processes at once): bare-nodemailer.mjs plus
// what the durability guarantee needs and nothing more (_claim-loop.mjs). It claims queued rows of
// the scratch table TABLE (`recipient`, `first_name`; seeded by the scenario) on Pigeon's PostgreSQL
// (BASELINE_PG) in batches of BATCH with FOR UPDATE SKIP LOCKED, sends each row's message (the very
// message bare-nodemailer.mjs sends: _campaign-message.mjs, DKIM-signed with a parsed KeyObject)
// through pooled nodemailer into SMTP_URL, IN_FLIGHT at a time, and marks each batch's rows SENT in
// one grouped statement. No tracking, no templates, no suppression or governor, no events.
// Starts at START_AT (epoch ms, so several processes start together), stops when a claim finds
// nothing left, then prints one line
//   result {"sent":…,"failed":…,"startAt":…,"endAt":…,"seconds":…,"messagesPerSec":…,…}
// (endAt: after its last record committed) and exits.
import { campaignMessage, dkimKey, pooledTransport } from './_campaign-message.mjs';
import { drainQueue } from './_claim-loop.mjs';
import { pool as pgPool } from './_db.mjs';

const TABLE = process.env.TABLE ?? 'bench_durable_emails';
// Pigeon's DELIVERY_CONCURRENCY and DELIVERY_CLAIM_BATCH defaults.
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 8);
const BATCH = Number(process.env.BATCH ?? 10);
const START_AT = Number(process.env.START_AT ?? Date.now());
if (!process.env.SMTP_URL) throw new Error('SMTP_URL is required');
if (!/^\w+$/.test(TABLE)) throw new Error(`TABLE must be a plain name, got ${TABLE}`);

const privateKey = dkimKey();
const transporter = pooledTransport(process.env.SMTP_URL);
// pg's pool opens a connection per statement in flight: one claim and the records of batches ending together.
const pool = pgPool();
await pool.query('SELECT 1'); // connected before the start

await new Promise((r) => setTimeout(r, Math.max(0, START_AT - Date.now())));
const result = await drainQueue({
  pool,
  table: TABLE,
  select: 't.recipient, t.first_name',
  batch: BATCH,
  inFlight: IN_FLIGHT,
  send: (row) =>
    transporter.sendMail(campaignMessage(Number(row.id), { to: row.recipient, firstName: row.first_name, privateKey })),
});
transporter.close();
await pool.end();
console.log(
  `result ${JSON.stringify({
    ...result,
    messagesPerSec: result.perSec,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  })}`,
);
process.exit(0);
