import { emailCounts, percentile, send, sleep, smallMessage, verifiedSenderDomain } from '../lib/sending.mjs';

/**
 * 10,000 emails queued through the API (100 POST /v1/send of 100 recipients each, 4 at a time),
 * delivered by Pigeon's workers, DKIM-signed (RSA-2048), over pooled SMTP into the harness's
 * smtp-server sink (its own process). A timed task, once per variant (DELIVERY_CONCURRENCY 4 and
 * 8, each on its own Pigeon). Queueing and delivery overlap, as they would in production.
 *
 * messagesPerSec = 10,000 ÷ (first POST accepted → 10,000th message received by the sink).
 * Latency per message = sink receipt − emails.created_at (the start of the transaction that
 * queued it, a little before the API answered). Pigeon CPU is over the same window, and over the
 * delivery-only part (after the last POST was accepted).
 */
const TOTAL = 10_000;
const PER_REQUEST = 100;
const PARALLEL_POSTS = 4;
const GIVE_UP_SECONDS = 600;
const SINK_POLL_MS = 100;
const DB_POLL_MS = 500;

const now = () => performance.timeOrigin + performance.now(); // epoch ms, as the sink records
const r1 = (v) => (v === null ? null : Number(v.toFixed(1)));
const fmt = (v, d = 0) => v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

const message = smallMessage;

export default {
  name: 'delivery-10k',
  description: `${fmt(TOTAL)} emails queued by POST /v1/send (${PER_REQUEST} recipients each), delivered DKIM-signed into the SMTP sink`,
  smtpSink: true,
  pigeonEnv: ({ smtpSink }) => ({ SMTP_URL: smtpSink.url }),
  variants: [
    { name: 'c4', description: 'DELIVERY_CONCURRENCY=4, the default', pigeonEnv: { DELIVERY_CONCURRENCY: 4 } },
    { name: 'c8', description: 'DELIVERY_CONCURRENCY=8', pigeonEnv: { DELIVERY_CONCURRENCY: 8 } },
  ],
  target: {
    metric: 'messagesPerSec',
    min: 400,
    unit: 'msg/s',
    label: `${fmt(TOTAL)} delivered at ≥ 400 msg/s (first accepted → last received)`,
  },
  async setup(ctx) {
    await verifiedSenderDomain(ctx);
    // One email end to end (also warms up the DKIM key cache and the SMTP pool), then a clean sink.
    await send(ctx, message('probe@example.com'));
    const deadline = Date.now() + 15_000;
    while ((await ctx.smtpSink.stats()).count < 1 || (await emailCounts(ctx)).sent < 1) {
      if (Date.now() > deadline) throw new Error('probe email not delivered within 15 s');
      await sleep(50, ctx.signal);
    }
    await ctx.smtpSink.reset();
    ctx.state.before = await emailCounts(ctx);
    ctx.state.bodies = Array.from({ length: TOTAL / PER_REQUEST }, (_, r) =>
      message(Array.from({ length: PER_REQUEST }, (_, i) => `user${r * PER_REQUEST + i + 1}@example.com`)),
    );
  },

  async run(ctx) {
    const { smtpSink: sink, state } = ctx;
    const sentBefore = state.before.sent;
    const startAt = now();
    const cpuStart = ctx.cpu();
    let accepted = 0;
    let firstAcceptedAt = null;
    let lastAcceptedAt = null;
    let cpuAccepted = null;
    let cpuDone = null;
    let doneAt = null;
    let maxRssMb = 0;
    let failure = null;
    const progression = []; // { s, accepted, sent, received }

    // Queueing: 100 requests, PARALLEL_POSTS at a time.
    const pending = [...state.bodies];
    const posting = Promise.all(
      Array.from({ length: PARALLEL_POSTS }, async () => {
        while (pending.length && !failure) {
          const out = await send(ctx, pending.shift());
          const at = now();
          firstAcceptedAt ??= at;
          lastAcceptedAt = at;
          accepted += out.emails.length;
        }
      }),
    )
      .then(() => {
        cpuAccepted = ctx.cpu();
      })
      .catch((err) => {
        failure ??= err;
      });

    // The sink, every 100 ms, until it has received TOTAL; Pigeon's RSS alongside.
    const giveUpAt = startAt + GIVE_UP_SECONDS * 1000;
    const watching = (async () => {
      for (;;) {
        const { count } = await sink.stats();
        maxRssMb = Math.max(maxRssMb, ctx.memory().rssMb ?? 0);
        if (count >= TOTAL) {
          cpuDone = ctx.cpu();
          doneAt = now();
          return;
        }
        if (failure) return;
        if (now() > giveUpAt) {
          failure = new Error(`sink has ${count} of ${TOTAL} messages after ${GIVE_UP_SECONDS} s`);
          return;
        }
        await sleep(SINK_POLL_MS, ctx.signal);
      }
    })();

    // Progression from the database (SENT count) and the sink, every 500 ms.
    const sampling = (async () => {
      while (!doneAt && !failure) {
        const [c, s] = await Promise.all([emailCounts(ctx), sink.stats()]);
        progression.push({
          s: r1((now() - startAt) / 1000),
          accepted,
          sent: c.sent - sentBefore,
          received: s.count,
          failed: c.failed,
        });
        await sleep(DB_POLL_MS, ctx.signal);
      }
    })();

    await Promise.all([posting, watching, sampling]);
    if (failure) throw failure;
    const memory = ctx.memory();

    // Every SENT update follows its SMTP reply: wait for the last ones to commit.
    let counts;
    for (let i = 0; i < 100; i++) {
      counts = await emailCounts(ctx);
      if (counts.sent - sentBefore >= TOTAL) break;
      await sleep(100, ctx.signal);
    }
    progression.push({
      s: r1((now() - startAt) / 1000),
      accepted,
      sent: counts.sent - sentBefore,
      received: (await sink.stats()).count,
      failed: counts.failed,
    });

    // Per message: sink receipt vs emails.created_at, matched by Message-ID.
    const received = await sink.messages();
    const { rows } = await ctx.sql(
      `SELECT message_id, extract(epoch FROM created_at) * 1000 AS created, extract(epoch FROM sent_at) * 1000 AS sent
       FROM emails WHERE project_id = $1`,
      [ctx.projectId],
    );
    const byId = new Map(rows.map((r) => [r.message_id, { created: Number(r.created), sent: Number(r.sent) }]));
    const seen = new Set();
    let duplicates = 0;
    let unmatched = 0;
    let withoutDkim = 0;
    let bytes = 0;
    const latencies = [];
    const sentLags = [];
    for (const m of received) {
      bytes += m.bytes;
      if (!m.dkim) withoutDkim++;
      const row = byId.get(m.messageId);
      if (!row) {
        unmatched++;
        continue;
      }
      if (seen.has(m.messageId)) {
        duplicates++;
        continue;
      }
      seen.add(m.messageId);
      latencies.push(m.at - row.created);
      if (row.sent) sentLags.push(row.sent - m.at);
    }
    latencies.sort((a, b) => a - b);
    sentLags.sort((a, b) => a - b);
    const times = received.map((m) => m.at).sort((a, b) => a - b);
    const nth = (k) => times[Math.min(times.length, k) - 1];
    const lastAt = nth(TOTAL);
    const seconds = (lastAt - firstAcceptedAt) / 1000;
    const messagesPerSec = TOTAL / seconds;
    // 10th → 90th percentile of receipts: the rate once the pipeline is full.
    const steadyPerSec = (0.8 * TOTAL) / ((nth(0.9 * TOTAL) - nth(0.1 * TOTAL)) / 1000);
    // After the last POST was accepted: delivery only, nothing else for Pigeon to do.
    const afterQueueing = times.filter((t) => t > lastAcceptedAt && t <= lastAt).length;
    const deliveryOnlySeconds = (lastAt - lastAcceptedAt) / 1000;
    const sinkSeconds = (times.at(-1) - times[0]) / 1000;

    const window = (a, b) => {
      const wall = (b.at - a.at) / 1000;
      const pct = (x, y) => (x === null || y === null ? null : r1(((y - x) / wall) * 100));
      return {
        seconds: Number(wall.toFixed(2)),
        pigeonCpuPercentOfCore: pct(a.pigeon, b.pigeon),
        dbCpuPercentOfCore: pct(a.db, b.db),
        sinkCpuPercentOfCore: pct(a.sink, b.sink),
        // The machine's busy CPU that is none of Pigeon, PostgreSQL, the sink or the harness.
        otherCpuPercentOfCore: r1(
          (Math.max(
            0,
            b.machine - a.machine - (b.pigeon - a.pigeon) - (b.db - a.db) - (b.sink - a.sink) - (b.harness - a.harness),
          ) /
            wall) *
            100,
        ),
      };
    };
    const whole = window(cpuStart, cpuDone);
    const deliveryOnly = cpuAccepted && cpuAccepted.at < cpuDone.at ? window(cpuAccepted, cpuDone) : null;
    const ms = (v) => (v === null ? null : Math.round(v));

    const problems = [];
    if (received.length < TOTAL) problems.push(`sink received ${received.length} of ${TOTAL}`);
    if (seen.size < TOTAL) problems.push(`${TOTAL - seen.size} messages missing`);
    if (duplicates) problems.push(`${duplicates} duplicates`);
    if (unmatched) problems.push(`${unmatched} messages with an unknown Message-ID`);
    if (withoutDkim) problems.push(`${withoutDkim} messages without DKIM-Signature`);
    if (counts.failed) problems.push(`${counts.failed} emails FAILED/BOUNCED`);

    // Per-second table for the report.
    const table = ['   s  accepted      SENT  received  received/s'];
    let prev = { s: 0, received: 0 };
    // About one row a second: the first sample of each second, and the last one.
    const rows1s = progression.filter(
      (p, i, a) => i === 0 || i === a.length - 1 || Math.floor(p.s) > Math.floor(a[i - 1].s),
    );
    for (const p of rows1s) {
      const rate = p.s > prev.s ? (p.received - prev.received) / (p.s - prev.s) : 0;
      table.push(
        `${p.s.toFixed(1).padStart(5)} ${String(p.accepted).padStart(9)} ${String(p.sent).padStart(9)} ` +
          `${String(p.received).padStart(9)} ${Math.round(rate).toString().padStart(11)}`,
      );
      prev = p;
    }
    ctx.attach(`progression (s since start; SENT from the database, received by the sink)`, table.join('\n'));
    ctx.note(
      `queueing: ${TOTAL / PER_REQUEST} × POST /v1/send of ${PER_REQUEST} recipients, ${PARALLEL_POSTS} at a time, ` +
        `${fmt((lastAcceptedAt - startAt) / 1000, 1)} s (${fmt(TOTAL / ((lastAcceptedAt - startAt) / 1000))} emails/s accepted); ` +
        `${fmt(received.filter((m) => m.at <= lastAcceptedAt).length)} already delivered when the last POST returned`,
    );
    ctx.note(
      `rates: ${fmt(messagesPerSec)} msg/s overall, ${fmt(steadyPerSec)} msg/s between the 1,000th and 9,000th receipt, ` +
        `${fmt(afterQueueing / deliveryOnlySeconds)} msg/s after queueing ended; sink ${fmt(received.length / sinkSeconds)} msg/s ` +
        `(${fmt(bytes / sinkSeconds / 2 ** 20, 2)} MiB/s, ${fmt(bytes / received.length)} bytes a message, ` +
        `${fmt((await sink.stats()).connections)} SMTP connections)`,
    );
    ctx.note(
      `Pigeon CPU ${whole.pigeonCpuPercentOfCore}% of a core over the whole window (${whole.seconds} s), ` +
        (deliveryOnly
          ? `${deliveryOnly.pigeonCpuPercentOfCore}% while only delivering (${deliveryOnly.seconds} s, PostgreSQL ${deliveryOnly.dbCpuPercentOfCore}%, sink ${deliveryOnly.sinkCpuPercentOfCore}%); `
          : '') +
        `PostgreSQL ${whole.dbCpuPercentOfCore}%, sink ${whole.sinkCpuPercentOfCore}%, other processes ${whole.otherCpuPercentOfCore}%; Pigeon RSS ${fmt(memory.rssMb)} MB at the end, ` +
        `max ${fmt(maxRssMb)} MB sampled, peak (VmHWM) ${fmt(memory.peakRssMb)} MB`,
    );

    return {
      messagesPerSec: Math.round(messagesPerSec),
      seconds: Number(seconds.toFixed(2)),
      steadyMessagesPerSec: Math.round(steadyPerSec),
      afterQueueingMessagesPerSec: Math.round(afterQueueing / deliveryOnlySeconds),
      queueingSeconds: Number(((lastAcceptedAt - startAt) / 1000).toFixed(2)),
      latencyP50Ms: ms(percentile(latencies, 50)),
      latencyP99Ms: ms(percentile(latencies, 99)),
      latencyMaxMs: ms(latencies.at(-1) ?? null),
      sentAtMinusReceiptP50Ms: ms(percentile(sentLags, 50)),
      received: received.length,
      uniqueDelivered: seen.size,
      withoutDkim,
      bytesPerMessage: Math.round(bytes / received.length),
      sink: {
        messagesPerSec: Math.round(received.length / sinkSeconds),
        mibPerSec: Number((bytes / sinkSeconds / 2 ** 20).toFixed(2)),
        cpuPercentOfCore: whole.sinkCpuPercentOfCore,
      },
      cpuWindow: whole,
      cpuDeliveryOnly: deliveryOnly,
      workerCpuPercentOfCore: whole.pigeonCpuPercentOfCore,
      rssMbAtEnd: r1(memory.rssMb),
      maxRssMbSampled: r1(maxRssMb),
      progression,
      problem: problems.length ? problems.join('; ') : undefined,
      summary:
        `${fmt(TOTAL)} delivered in ${fmt(seconds, 1)} s = ${fmt(messagesPerSec)} msg/s ` +
        `(steady ${fmt(steadyPerSec)}); accepted→received p50 ${fmt(ms(percentile(latencies, 50)))} ms, ` +
        `p99 ${fmt(ms(percentile(latencies, 99)))} ms; Pigeon ${whole.pigeonCpuPercentOfCore}% of a core, ` +
        `PostgreSQL ${whole.dbCpuPercentOfCore}%, sink ${whole.sinkCpuPercentOfCore}%; RSS ${fmt(memory.rssMb)} MB`,
    };
  },
};
