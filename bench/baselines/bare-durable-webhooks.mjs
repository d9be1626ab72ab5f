// The same-work ceiling of webhooks-20k: bare-webhooks.mjs (undici Pool, the client Pigeon sends
// with) plus what the durability guarantee needs and nothing more (_claim-loop.mjs). It claims
// pending deliveries of the scratch table TABLE (`webhook_id`, `payload` jsonb: the very ids and
// payloads Pigeon stored, seeded by the scenario) on Pigeon's PostgreSQL (BASELINE_PG) in batches of
// BATCH with FOR UPDATE SKIP LOCKED, POSTs each to URL signed per request (_webhook-sign.mjs, as
// bare-webhooks.mjs and Pigeon) with CONCURRENCY in flight over an undici Pool of as many
// connections, and records each batch's outcomes (2xx: SENT, else FAILED) in one grouped statement.
// No retries schedule, no attempts log, no feed, no per-endpoint windows. Starts at START_AT (epoch
// ms), stops when a claim finds nothing left, prints `result {…}` (endAt: after its last record
// committed) and exits.
import { Pool } from 'undici';
import { drainQueue } from './_claim-loop.mjs';
import { pool as pgPool } from './_db.mjs';
import { postSigned, webhookSigner } from './_webhook-sign.mjs';

const TABLE = process.env.TABLE ?? 'bench_durable_webhooks';
// Pigeon's WEBHOOK_ENDPOINT_CONCURRENCY; its claim loop holds CLAIM_AHEAD (4) × that claimed.
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);
const BATCH = Number(process.env.BATCH ?? 4 * CONCURRENCY);
const START_AT = Number(process.env.START_AT ?? Date.now());
if (!process.env.URL || !process.env.SECRET) throw new Error('URL and SECRET are required');
if (!/^\w+$/.test(TABLE)) throw new Error(`TABLE must be a plain name, got ${TABLE}`);

const url = new URL(process.env.URL);
const http = new Pool(url.origin, { connections: CONCURRENCY });
const sign = webhookSigner(process.env.SECRET);
const pool = pgPool();
await pool.query('SELECT 1'); // connected before the start

const post = ({ webhook_id: id, body }) => postSigned(http, url, sign, id, body);

await new Promise((r) => setTimeout(r, Math.max(0, START_AT - Date.now())));
const result = await drainQueue({
  pool,
  table: TABLE,
  select: 't.webhook_id, t.payload::text AS body',
  batch: BATCH,
  inFlight: CONCURRENCY,
  send: post,
});
await http.close();
await pool.end();
console.log(`result ${JSON.stringify({ ...result, peakRssMb: process.resourceUsage().maxRSS / 1024 })}`);
process.exit(0);
