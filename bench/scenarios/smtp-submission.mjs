import { createRequire } from 'node:module';
import { freePort } from '../lib/process.mjs';
import { emailCounts, SENDER, sleep, verifiedSenderDomain } from '../lib/sending.mjs';

/**
 * SMTP submission against POST /v1/send, in the same run on the same Pigeon (issue 59): 10,000
 * messages submitted over 8 connections (STARTTLS, AUTH PLAIN with the secret key; nodemailer's
 * pooled SMTP client, one message per transaction: MAIL, RCPT, DATA, then RSET as it does) and
 * 10,000 POST /v1/send over 8 keep-alive connections (8 loops of `fetch`), one recipient each, the
 * same small message (text and HTML with one link; the project tracks, so both are rewritten per
 * recipient). Each phase starts on an empty queue (the previous one's mail delivered first), and
 * Pigeon's delivery workers deliver to the sink meanwhile, as in production.
 *
 * acceptedPerSec = messages ÷ (first start → last 200/250). Target: SMTP ≥ 0.7 × HTTP.
 */
const TOTAL = 10_000;
const CONNECTIONS = 8;
const WARMUP = 200;
const DRAIN_GIVE_UP_MS = 300_000;

const require = createRequire(new URL('../../packages/server/package.json', import.meta.url));
const nodemailer = require('nodemailer');

const fmt = (v, d = 0) => v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
const TEXT = 'Hello there: https://example.org/welcome';
const HTML = '<p>Hello <a href="https://example.org/welcome">there</a></p>';

const httpBody = (n) => ({ to: `http${n}@example.com`, from: SENDER, subject: 'Welcome', body: HTML, text: TEXT });

const mime = (n) =>
  [
    `From: "Bench" <${SENDER}>`,
    `To: smtp${n}@example.com`,
    'Subject: Welcome',
    `Message-ID: <smtp-${n}-${process.pid}@bench.example>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain; charset=utf-8',
    '',
    TEXT,
    '--b',
    'Content-Type: text/html; charset=utf-8',
    '',
    HTML,
    '--b--',
    '',
  ].join('\r\n');

export default {
  name: 'smtp-submission',
  description: `${fmt(TOTAL)} messages over SMTP submission (${CONNECTIONS} connections, STARTTLS + AUTH) vs ${fmt(TOTAL)} POST /v1/send (${CONNECTIONS} connections), accepted per second`,
  smtpSink: true,
  pigeonEnv: async ({ smtpSink }) => ({ SMTP_URL: smtpSink.url, SMTP_SUBMISSION_PORT: await freePort() }),
  target: {
    metric: 'ratio',
    min: 0.7,
    unit: '×',
    digits: 2,
    label: 'SMTP submission accepted/s ≥ 0.7 × POST /v1/send accepted/s',
  },
  async setup(ctx) {
    await verifiedSenderDomain(ctx);
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: Number(ctx.pigeonEnv.SMTP_SUBMISSION_PORT),
      requireTLS: true,
      tls: { rejectUnauthorized: false }, // Pigeon's generated self-signed certificate
      auth: { user: 'pigeon', pass: ctx.secretKey },
      pool: true,
      maxConnections: CONNECTIONS,
      maxMessages: Number.POSITIVE_INFINITY,
    });
    ctx.state.transport = transport;
    // Warm-up of both paths (JIT, prepared statements, pool connections), then an empty queue.
    await httpPhase(ctx, -WARMUP, 0);
    await smtpPhase(ctx, -WARMUP, 0);
    await drain(ctx);
  },

  async run(ctx) {
    const http = await httpPhase(ctx, 0, TOTAL);
    const httpDrain = await drain(ctx);
    const smtp = await smtpPhase(ctx, 0, TOTAL);
    const smtpDrain = await drain(ctx);
    ctx.state.transport.close();
    const ratio = smtp.perSec / http.perSec;
    const { rows } = await ctx.sql(
      `SELECT count(*) FILTER (WHERE mime IS NOT NULL)::int AS smtp, count(*) FILTER (WHERE mime IS NULL)::int AS http
       FROM emails WHERE project_id = $1 AND (to_email LIKE 'smtp%' OR to_email LIKE 'http%') AND status = 'SENT'`,
      [ctx.projectId],
    );
    const problems = [];
    if (rows[0].smtp < TOTAL) problems.push(`${rows[0].smtp} of ${TOTAL} SMTP messages SENT`);
    if (rows[0].http < TOTAL) problems.push(`${rows[0].http} of ${TOTAL} POST /v1/send emails SENT`);
    const line = (name, p, d) =>
      `${name}: ${fmt(TOTAL)} accepted in ${fmt(p.seconds, 2)} s = ${fmt(p.perSec)}/s; Pigeon ${p.cpu.pigeon}% of a core, ` +
      `PostgreSQL ${p.cpu.db}%, harness ${p.cpu.harness}%; queue drained ${fmt(d, 1)} s after`;
    ctx.note(line('POST /v1/send', http, httpDrain));
    ctx.note(line('SMTP submission', smtp, smtpDrain));
    return {
      ratio: Number(ratio.toFixed(3)),
      httpPerSec: Math.round(http.perSec),
      smtpPerSec: Math.round(smtp.perSec),
      httpSeconds: Number(http.seconds.toFixed(2)),
      smtpSeconds: Number(smtp.seconds.toFixed(2)),
      cpu: { http: http.cpu, smtp: smtp.cpu },
      problem: problems.length ? problems.join('; ') : undefined,
      summary: `SMTP ${fmt(smtp.perSec)}/s vs POST /v1/send ${fmt(http.perSec)}/s = ${ratio.toFixed(2)}×`,
    };
  },
};

/** Messages `from`…`to`-1 through POST /v1/send, CONNECTIONS at a time. */
async function httpPhase(ctx, from, to) {
  let next = from;
  return timed(ctx, to - from, () =>
    Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next < to && !ctx.signal.aborted) {
          const n = next++;
          // No abort signal per request: 10,000 of them on the harness's one signal pile up listeners.
          const init = { method: 'POST', headers: ctx.auth, json: httpBody(n), signal: null };
          const res = await ctx.fetch('/v1/send', init);
          const text = await res.text();
          if (res.status !== 200) throw new Error(`POST /v1/send → ${res.status}: ${text.slice(0, 300)}`);
        }
      }),
    ),
  );
}

/** Messages `from`…`to`-1 over SMTP submission, on the pool's CONNECTIONS connections. */
function smtpPhase(ctx, from, to) {
  const { transport } = ctx.state;
  return timed(ctx, to - from, () =>
    Promise.all(
      Array.from({ length: to - from }, (_, i) => {
        const n = from + i;
        return transport.sendMail({ envelope: { from: SENDER, to: [`smtp${n}@example.com`] }, raw: mime(n) });
      }),
    ),
  );
}

async function timed(ctx, count, work) {
  const before = ctx.cpu();
  const started = performance.now();
  await work();
  const seconds = (performance.now() - started) / 1000;
  const after = ctx.cpu();
  const pct = (k) => Math.round(((after[k] - before[k]) / ((after.at - before.at) / 1000)) * 100);
  return { seconds, perSec: count / seconds, cpu: { pigeon: pct('pigeon'), db: pct('db'), harness: pct('harness') } };
}

/** Waits until nothing of the project is queued or being sent; answers the seconds it took. */
async function drain(ctx) {
  const started = performance.now();
  for (;;) {
    const c = await emailCounts(ctx);
    if (c.queued + c.sending === 0) return (performance.now() - started) / 1000;
    if (performance.now() - started > DRAIN_GIVE_UP_MS) throw new Error(`queue not drained: ${JSON.stringify(c)}`);
    await sleep(250, ctx.signal);
  }
}
