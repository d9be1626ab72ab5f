import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startNode } from '../lib/process.mjs';
import { SENDER_DOMAIN, sleep, verifiedSenderDomain } from '../lib/sending.mjs';

/**
 * Inbound mail to a webhook route (issue 59): TOTAL messages delivered to Pigeon's inbound SMTP
 * port over CONNECTIONS connections (nodemailer's pooled SMTP client, one message per transaction,
 * as a sending MTA would), each to `support@bench.example`, a WEBHOOK route; one endpoint
 * subscribed to `email.received` on the bench's webhook receiver (its own process, answers 204).
 * Per message Pigeon matches the route at RCPT, parses the message, checks SPF/DKIM/DMARC against
 * the scenario's DNS server (no records: `none`), stores it and records the event; the change feed
 * turns each event into a signed delivery.
 *
 * seconds = first connection → the receiver has every message's delivery. Target: ≤ 30 s.
 */
const TOTAL = Number(process.env.BENCH_INBOUND_MESSAGES ?? 1_000);
const CONNECTIONS = 4;
const WARMUP = 50;
const GIVE_UP_MS = 120_000;
const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(new URL('../../packages/server/package.json', import.meta.url));
const nodemailer = require('nodemailer');

const message = (n) =>
  [
    `From: "Person ${n}" <person${n}@people.example>`,
    `To: support@${SENDER_DOMAIN}`,
    `Subject: Question ${n}`,
    `Message-ID: <inbound-${n}-${process.pid}@people.example>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    `Hello, this is question ${n}: how do I change my plan?`,
    '',
  ].join('\r\n');

export default {
  name: 'inbound-webhook',
  description: `${TOTAL.toLocaleString('en-US')} inbound messages (${CONNECTIONS} SMTP connections) to a WEBHOOK route, until every email.received delivery arrived`,
  dnsServer: true,
  pigeonEnv: async ({ dnsServer }) => ({
    DNS_SERVERS: dnsServer.address,
    INBOUND_SMTP_PORT: await freePort(),
    INBOUND_SMTP_HOST: '127.0.0.1',
    INBOUND_SMTP_MESSAGES_PER_MINUTE: 1_000_000,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  }),
  target: {
    metric: 'seconds',
    max: 30,
    unit: 's',
    digits: 2,
    label: '1,000 inbound messages to a webhook route ≤ 30 s',
  },

  async setup(ctx) {
    await verifiedSenderDomain(ctx);
    const route = await ctx.fetch('/inbound-routes', {
      method: 'POST',
      headers: ctx.auth,
      json: { domain: SENDER_DOMAIN, pattern: 'support', action: 'WEBHOOK' },
    });
    if (route.status !== 201) throw new Error(`POST /inbound-routes → ${route.status}: ${await route.text()}`);
    const receiver = startNode({
      name: 'webhook receiver',
      args: [join(BENCH_DIR, 'services', 'webhook-receiver.mjs')],
      env: { ...process.env, PORT: '0' },
      ready: /listening on (http:\/\/\S+)/,
    });
    await receiver.ready;
    const origin = /listening on (http:\/\/\S+)/.exec(receiver.output())[1];
    const endpoint = await ctx.fetch('/webhook-endpoints', {
      method: 'POST',
      headers: ctx.auth,
      json: { url: `${origin}/hooks`, eventTypes: ['email.received'] },
    });
    if (endpoint.status !== 201) throw new Error(`POST /webhook-endpoints → ${endpoint.status}`);
    await endpoint.body?.cancel();
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: Number(ctx.pigeonEnv.INBOUND_SMTP_PORT),
      ignoreTLS: true,
      pool: true,
      maxConnections: CONNECTIONS,
      maxMessages: Number.POSITIVE_INFINITY,
    });
    Object.assign(ctx.state, { receiver, origin, transport });
    await deliver(ctx, -WARMUP, 0); // JIT, prepared statements, the feed's first batches
    await arrived(ctx, WARMUP);
    await fetch(`${origin}/reset`, { method: 'POST' });
  },

  async run(ctx) {
    const before = ctx.cpu();
    const started = performance.now();
    await deliver(ctx, 0, TOTAL);
    const acceptedSeconds = (performance.now() - started) / 1000;
    const stats = await arrived(ctx, TOTAL);
    const seconds = (stats.lastAt - (performance.timeOrigin + started)) / 1000;
    const after = ctx.cpu();
    const pct = (k) => Math.round(((after[k] - before[k]) / ((after.at - before.at) / 1000)) * 100);
    ctx.state.transport.close();
    await ctx.state.receiver.stop();
    const { rows } = await ctx.sql(
      `SELECT count(*)::int AS n FROM inbound_emails WHERE project_id = $1 AND subject LIKE 'Question %'`,
      [ctx.projectId],
    );
    const problems = [];
    if (rows[0].n < TOTAL + WARMUP) problems.push(`${rows[0].n} of ${TOTAL + WARMUP} messages stored`);
    if (stats.duplicates > 0) problems.push(`${stats.duplicates} duplicate deliveries`);
    ctx.note(
      `${TOTAL} messages accepted over SMTP in ${acceptedSeconds.toFixed(2)} s (${Math.round(TOTAL / acceptedSeconds)}/s); ` +
        `every email.received delivered ${seconds.toFixed(2)} s after the first connection; ` +
        `Pigeon ${pct('pigeon')}% of a core, PostgreSQL ${pct('db')}%, harness ${pct('harness')}%`,
    );
    return {
      seconds: Number(seconds.toFixed(2)),
      acceptedSeconds: Number(acceptedSeconds.toFixed(2)),
      perSec: Math.round(TOTAL / seconds),
      problem: problems.length ? problems.join('; ') : undefined,
      summary: `${TOTAL} inbound messages to webhook deliveries in ${seconds.toFixed(2)} s (${Math.round(TOTAL / seconds)}/s)`,
    };
  },
};

/** Messages `from`…`to`-1 to the route, on the pool's connections. */
function deliver(ctx, from, to) {
  const { transport } = ctx.state;
  return Promise.all(
    Array.from({ length: to - from }, (_, i) => {
      const n = from + i;
      return transport.sendMail({
        envelope: { from: `person${n}@people.example`, to: [`support@${SENDER_DOMAIN}`] },
        raw: message(n),
      });
    }),
  );
}

/** Polls the receiver until it has `count` distinct deliveries; answers its stats. */
async function arrived(ctx, count) {
  const started = performance.now();
  for (;;) {
    const stats = await (await fetch(`${ctx.state.origin}/stats`)).json();
    if (stats.distinct >= count) return stats;
    if (performance.now() - started > GIVE_UP_MS) throw new Error(`${stats.distinct} of ${count} deliveries arrived`);
    await sleep(100, ctx.signal);
  }
}
