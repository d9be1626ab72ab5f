import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateIdempotencyKey } from '../../packages/sdk/dist/index.js';
import { startNode } from '../lib/process.mjs';
import { fmt, r1, runAutocannon, waitFeedDrained } from '../lib/segments.mjs';
import { SENDER, sleep, smallMessage, verifiedSenderDomain } from '../lib/sending.mjs';
import { PerMinute, pacedLoad, sumOf, tableStats } from '../lib/soak.mjs';
import {
  buildWorkflow,
  cpuWindow,
  createTemplate,
  processSnapshot,
  seedContacts,
  waitWorkflowConsumer,
} from '../lib/workflows.mjs';

/**
 * A mixed load for MINUTES (issue 26): does Pigeon stay flat over time while retention expires
 * what it wrote? On a Pigeon of its own with the SMTP sink, retention run every minute with a
 * retention "day" of DAY_SECONDS (RETENTION_INTERVAL_MINUTES, RETENTION_DAY_SECONDS) and the
 * project's events, content and emails kept one such day, track Idempotency-Keys kept 2 minutes.
 *
 * Setup: CONTACTS contacts seeded in SQL, the feed drained; a workflow `soak.signup`: DELAY 1
 * minute → SEND_EMAIL → EXIT (re-entry allowed); then 8 s of keyed tracks at 50 connections to
 * find what the machine sustains: the soak tracks at half that (or BENCH_SOAK_TRACK_RATE).
 *
 * Load, all open loop: keyed POST /v1/track at the rate (a random seeded contact, `page.view`,
 * 1 in 100 `soak.signup`, which starts the workflow); POST /v1/send at SEND_RATE a second; a
 * campaign to every contact every CAMPAIGN_MINUTES minutes (the first at minute 1). An event webhook
 * endpoint wants every `email.*` event and `soak.signup` (a receiver in its own process,
 * services/webhook-receiver.mjs, answering 204 at once): its deliveries expire with the events.
 *
 * Sampled: track and send latency per minute; every 5 s the RSS of each Pigeon process; every
 * minute each table (partitions in their parent) with its indexes, its dead tuples, the rows
 * deleted and the autovacuum runs, and CPU per role.
 *
 * Targets: p99 of the last WINDOW minutes ≤ 1.2 × the first WINDOW's (track, send); each
 * process's RSS peak in the last WINDOW ≤ 1.1 × the first WINDOW's; the tables retention keeps
 * bounded (HISTORY below) grow ≤ 10% from minute SETTLED (retention has run for a while) to the end.
 */
const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 30);
const DAY_SECONDS = Number(process.env.BENCH_SOAK_DAY_SECONDS ?? 300);
const CONTACTS = Number(process.env.BENCH_SOAK_CONTACTS ?? 5_000);
const CAMPAIGN_MINUTES = Number(process.env.BENCH_SOAK_CAMPAIGN_MINUTES ?? 5);
const SEND_RATE = Number(process.env.BENCH_SOAK_SEND_RATE ?? 5);
const FIXED_TRACK_RATE = process.env.BENCH_SOAK_TRACK_RATE ? Number(process.env.BENCH_SOAK_TRACK_RATE) : null;
const WINDOW = Math.max(1, Math.min(5, Math.floor(MINUTES / 3)));
const SETTLED = Math.min(MINUTES - WINDOW, Math.ceil(DAY_SECONDS / 60) + 3);
const DOMAIN = 'soak.example';
/** What retention and the clean-up jobs keep bounded: history and the short-lived tables. */
const HISTORY = [
  'events',
  'emails',
  'email_link_clicks',
  'idempotency_keys',
  'rate_limit_counters',
  'revoked_sessions',
  'contact_changes',
  'webhook_messages',
];
const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

const mb = (bytes) => Math.round(bytes / 1_048_576);
const ratio = (a, b) => (a === null || b === null || b === 0 ? null : Number((a / b).toFixed(2)));

export default {
  name: 'soak',
  description: `${MINUTES} min of keyed tracks (half of what the machine sustains), sends, campaigns and delayed workflows while retention expires`,
  smtpSink: true,
  pigeonEnv: ({ smtpSink }) => ({
    SMTP_URL: smtpSink.url,
    RETENTION_INTERVAL_MINUTES: '1',
    RETENTION_DAY_SECONDS: String(DAY_SECONDS),
    IDEMPOTENCY_TRACK_TTL_MINUTES: '2',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', // the receiver is on 127.0.0.1
  }),
  target: [
    { metric: 'trackP99Ratio', max: 1.2, unit: '×', digits: 2, label: `track p99, last ${WINDOW} min ≤ 1.2 × first` },
    { metric: 'sendP99Ratio', max: 1.2, unit: '×', digits: 2, label: `send p99, last ${WINDOW} min ≤ 1.2 × first` },
    {
      metric: 'rssRatio',
      max: 1.1,
      unit: '×',
      digits: 2,
      label: `RSS peak of every process, last ${WINDOW} min ≤ 1.1 × first`,
    },
    {
      metric: 'historyGrowthPercent',
      max: 10,
      unit: '%',
      digits: 1,
      label: `history and short-lived tables grow ≤ 10% after minute ${SETTLED}`,
    },
  ],

  async setup(ctx) {
    await waitWorkflowConsumer(ctx);
    await verifiedSenderDomain(ctx);
    await seedContacts(ctx, { prefix: 'soak', domain: DOMAIN, count: CONTACTS });
    await waitFeedDrained(ctx);
    await ctx.sql(
      `UPDATE projects SET retention_events_days = 1, retention_content_days = 1, retention_emails_days = 1 WHERE id = $1`,
      [ctx.projectId],
    );
    const templateId = await createTemplate(ctx, {
      name: 'welcome',
      subject: 'Welcome, {{firstName ?? "friend"}}',
      body: '<p>Hello {{firstName ?? "there"}}, a minute after you signed up.</p>',
      from: SENDER,
      type: 'TRANSACTIONAL',
    });
    await buildWorkflow(ctx, {
      name: `soak ${Date.now().toString(36)}`,
      trigger: 'soak.signup',
      allowReentry: true,
      steps: [
        { key: 'wait', type: 'DELAY', config: { amount: 1, unit: 'minutes' } },
        { key: 'mail', type: 'SEND_EMAIL', config: { templateId } },
        { key: 'done', type: 'EXIT', config: { reason: 'welcomed' } },
      ],
      transitions: [
        ['wait', 'mail'],
        ['mail', 'done'],
      ],
    });
    ctx.state.receiver = await startReceiver(ctx);
    const sustained = await runAutocannon(ctx, {
      url: new URL('/v1/track', ctx.baseUrl).href,
      connections: 50,
      duration: 8,
      requests: [
        {
          method: 'POST',
          headers: { ...ctx.publicAuth, 'content-type': 'application/json' },
          setupRequest: (req) => ({
            ...req,
            headers: { ...req.headers, 'idempotency-key': generateIdempotencyKey() },
            body: JSON.stringify(trackBody()),
          }),
        },
      ],
    });
    ctx.state.trackRate = FIXED_TRACK_RATE ?? Math.round(sustained.requests.average / 2);
    ctx.note(
      `setup: ${fmt(CONTACTS)} contacts; retention every minute, a retention day of ${DAY_SECONDS} s, the project ` +
        `keeps events, content and emails 1 day; keyed tracks sustained ${fmt(sustained.requests.average)} req/s ` +
        `(8 s, 50 connections, p99 ${sustained.latency.p99} ms) → the soak tracks at ${fmt(ctx.state.trackRate)}/s` +
        (FIXED_TRACK_RATE ? ' (BENCH_SOAK_TRACK_RATE)' : ''),
    );
  },

  async run(ctx) {
    try {
      return await soak(ctx);
    } finally {
      await ctx.state.receiver?.process.stop();
    }
  },
};

/** The webhook receiver and an endpoint on it wanting every email event and the signups. */
async function startReceiver(ctx) {
  const ready = /listening on (http:\/\/\S+)/;
  const receiver = startNode({
    name: 'webhook receiver',
    args: [join(BENCH_DIR, 'services', 'webhook-receiver.mjs')],
    env: { ...process.env, PORT: '0' },
    ready,
  });
  await receiver.ready;
  const origin = ready.exec(receiver.output())[1];
  await ctx.json('/webhook-endpoints', {
    method: 'POST',
    headers: ctx.auth,
    json: { url: `${origin}/hook`, eventTypes: ['email.*', 'soak.signup'] },
  });
  return { process: receiver, stats: async () => (await fetch(`${origin}/stats`)).json() };
}

/** Waits (at most a minute) until no delivery is PENDING or SENDING; answers the count per state. */
async function deliveriesSettled(ctx) {
  const deadline = performance.now() + 60_000;
  for (;;) {
    const { rows } = await ctx.sql('SELECT status, count(*)::int AS n FROM webhook_messages GROUP BY 1 ORDER BY 1');
    const states = Object.fromEntries(rows.map((r) => [r.status, r.n]));
    if ((!states.PENDING && !states.SENDING) || performance.now() > deadline) return states;
    await sleep(1_000, ctx.signal);
  }
}

async function soak(ctx) {
  const rate = ctx.state.trackRate;
  const startAt = performance.timeOrigin + performance.now();
  const endAt = startAt + MINUTES * 60_000;
  const stopped = () => performance.timeOrigin + performance.now() >= endAt;
  const tracks = new PerMinute(startAt);
  const sends = new PerMinute(startAt);
  const rss = []; // per minute: { pid: peak MB }
  const minutes = [];
  const campaigns = [];
  let problem;

  const trackLoad = pacedLoad(ctx, {
    rate,
    make: () => ({
      path: '/v1/track',
      headers: { ...ctx.publicAuth, 'idempotency-key': generateIdempotencyKey() },
      body: trackBody(),
    }),
    onAnswer: (a) => tracks.add(a),
    stopped,
  });
  const sendLoad = pacedLoad(ctx, {
    rate: SEND_RATE,
    maxInFlight: 16,
    make: () => ({ path: '/v1/send', headers: ctx.auth, body: smallMessage(randomContact()) }),
    onAnswer: (a) => sends.add(a),
    stopped,
  });
  const campaignLoop = (async () => {
    for (let m = 1; m < MINUTES; m += CAMPAIGN_MINUTES) {
      const wait = startAt + m * 60_000 - (performance.timeOrigin + performance.now());
      if (wait > 0) await sleep(wait, ctx.signal);
      const created = await ctx.json('/campaigns', {
        method: 'POST',
        headers: ctx.auth,
        json: {
          name: `soak minute ${m}`,
          subject: 'News for {{firstName ?? "you"}}',
          body: `<p>Hello {{firstName ?? "there"}}, this is minute ${m}.</p>`,
          from: SENDER,
          audienceType: 'ALL',
        },
      });
      const t0 = performance.now();
      await ctx.json(`/campaigns/${created.data.id}/send`, { method: 'POST', headers: ctx.auth, json: {} });
      campaigns.push({ id: created.data.id, minute: m, sendCallMs: Math.round(performance.now() - t0) });
    }
  })().catch((err) => {
    problem = `campaigns: ${err.message}`;
  });
  const sampler = (async () => {
    let last = processSnapshot(ctx);
    let lastTables = await tableStats(ctx);
    let lastHooks = (await ctx.state.receiver.stats()).count;
    for (let tick = 1; !stopped(); tick++) {
      await sleep(5_000, ctx.signal);
      const m = Math.floor((performance.timeOrigin + performance.now() - startAt) / 60_000);
      const snap = processSnapshot(ctx);
      rss[m] ??= {};
      const peaks = rss[m];
      for (const [pid, mbNow] of Object.entries(snap.rss)) peaks[pid] = Math.max(peaks[pid] ?? 0, mbNow ?? 0);
      if (tick % 12 !== 0) continue;
      const tables = await tableStats(ctx);
      const cpu = cpuWindow(last, snap);
      const hooks = (await ctx.state.receiver.stats()).count;
      const received = { mail: (await ctx.smtpSink.stats()).count, hooks: hooks - lastHooks };
      minutes.push(minuteRow(m, tables, lastTables, cpu, received));
      lastHooks = hooks;
      last = snap;
      lastTables = tables;
    }
  })().catch((err) => {
    problem ??= `sampler: ${err.message}`;
  });
  const [trackDone, sendDone] = await Promise.all([trackLoad, sendLoad]);
  await Promise.all([campaignLoop, sampler]);
  const deliveryStates = await deliveriesSettled(ctx);
  const hooks = await ctx.state.receiver.stats();
  if (deliveryStates.FAILED || deliveryStates.PENDING || deliveryStates.SENDING || hooks.count === 0)
    problem ??= `webhook deliveries at the end: ${JSON.stringify(deliveryStates)}, ${hooks.count} received`;

  const first = (s) => s.window(0, WINDOW);
  const lastW = (s) => s.window(MINUTES - WINDOW, MINUTES);
  const rssPeak = (from, to) => {
    const out = {};
    for (const minute of rss.slice(from, to))
      for (const [pid, v] of Object.entries(minute ?? {})) out[pid] = Math.max(out[pid] ?? 0, v);
    return out;
  };
  const rssFirst = rssPeak(0, WINDOW);
  const rssLast = rssPeak(MINUTES - WINDOW, MINUTES);
  const rssRatios = Object.keys(rssLast)
    .filter((pid) => rssFirst[pid])
    .map((pid) => ({
      pid,
      first: Math.round(rssFirst[pid]),
      last: Math.round(rssLast[pid]),
      ratio: ratio(rssLast[pid], rssFirst[pid]),
    }));
  const settled = minutes.find((row) => row.minute >= SETTLED);
  const end = minutes.at(-1);
  const historyGrowthPercent =
    settled && end ? r1((100 * (end.historyBytes - settled.historyBytes)) / settled.historyBytes) : null;

  const { rows: statuses } = await ctx.sql(
    `SELECT id, status, total_recipients FROM campaigns WHERE id = ANY($1::uuid[]) ORDER BY created_at`,
    [campaigns.map((c) => c.id)],
  );
  ctx.note(
    `per minute (m: minute of the run; rates and latencies of that minute; MB: tables with their indexes, history = ` +
      `${HISTORY.join(', ')}; deleted: rows deleted in that minute; CPU in % of a core):\n\n` +
      progressionTable(minutes, tracks, sends, rss),
  );
  ctx.note(
    `webhooks: ${fmt(hooks.count)} deliveries received (${fmt(hooks.distinct)} webhook-ids, ${fmt(hooks.duplicates)} twice or more); ` +
      `deliveries left at the end by state (the older ones expired with the events): ${JSON.stringify(deliveryStates)}`,
  );
  ctx.note(
    `campaigns: ${campaigns.map((c) => `minute ${c.minute} (send call ${c.sendCallMs} ms, ${statuses.find((s) => s.id === c.id)?.status})`).join('; ')}`,
  );
  ctx.note(
    `largest tables at the end: ${Object.entries(end?.tables ?? {})
      .sort((a, b) => b[1].bytes - a[1].bytes)
      .slice(0, 12)
      .map(
        ([name, t]) =>
          `${name} ${mb(t.bytes)} MB (indexes ${mb(t.indexBytes)}, ${fmt(t.live)} live, ${fmt(t.dead)} dead)`,
      )
      .join('; ')}`,
  );
  const failed = { tracks: tracks.window(0, MINUTES).errors, sends: sends.window(0, MINUTES).errors };
  if (failed.tracks || failed.sends)
    problem ??=
      `${failed.tracks} tracks and ${failed.sends} sends answered other than 2xx (by status: tracks ` +
      `${JSON.stringify(tracks.window(0, MINUTES).statuses)}, sends ${JSON.stringify(sends.window(0, MINUTES).statuses)})`;
  const tf = first(tracks);
  const tl = lastW(tracks);
  const sf = first(sends);
  const sl = lastW(sends);
  return {
    minutes: MINUTES,
    trackRate: rate,
    tracksSent: trackDone.sent,
    tracksLate: trackDone.late,
    sendsSent: sendDone.sent,
    sendsLate: sendDone.late,
    trackFirst: tf,
    trackLast: tl,
    sendFirst: sf,
    sendLast: sl,
    trackP99Ratio: ratio(tl.p99, tf.p99),
    sendP99Ratio: ratio(sl.p99, sf.p99),
    rssRatio: rssRatios.length ? Math.max(...rssRatios.map((r) => r.ratio)) : null,
    rssByProcess: rssRatios,
    historyGrowthPercent,
    settledMinute: settled?.minute ?? null,
    campaigns: statuses,
    webhooks: { received: hooks.count, duplicates: hooks.duplicates, states: deliveryStates },
    perMinute: minutes.map(({ tables, ...row }) => row),
    problem,
    summary:
      `${MINUTES} min at ${fmt(rate)} tracks/s (${fmt(trackDone.late)} late, ${fmt(failed.tracks)} not 2xx) + ` +
      `${SEND_RATE} sends/s (${fmt(failed.sends)} not 2xx) + ${campaigns.length} campaigns: ` +
      `track p99 ${tf.p99} → ${tl.p99} ms, send p99 ${sf.p99} → ${sl.p99} ms; RSS peaks ` +
      `${rssRatios.map((r) => `${r.first}→${r.last}`).join(', ')} MB; history ${mb(settled?.historyBytes ?? 0)} → ` +
      `${mb(end?.historyBytes ?? 0)} MB after minute ${settled?.minute}; ${fmt(hooks.count)} webhook deliveries`,
  };
}

function randomContact() {
  return `soak${Math.floor(Math.random() * CONTACTS)}@${DOMAIN}`;
}

function trackBody() {
  const signup = Math.random() < 0.01;
  return { email: randomContact(), event: signup ? 'soak.signup' : 'page.view', data: { path: '/pricing' } };
}

/** One minute's database sample, with what changed since the previous one. */
function minuteRow(minute, tables, before, cpu, received) {
  const delta = (name, field) => (tables[name]?.[field] ?? 0) - (before[name]?.[field] ?? 0);
  return {
    minute,
    tables,
    allBytes: sumOf(tables, 'bytes'),
    historyBytes: HISTORY.reduce((n, name) => n + (tables[name]?.bytes ?? 0), 0),
    events: tables.events?.live ?? 0,
    emails: tables.emails?.live ?? 0,
    dead: sumOf(tables, 'dead'),
    eventsDeleted: delta('events', 'deleted'),
    emailsDeleted: delta('emails', 'deleted'),
    keysDeleted: delta('idempotency_keys', 'deleted'),
    deliveriesDeleted: delta('webhook_messages', 'deleted'),
    autovacuums: sumOf(tables, 'autovacuums') - sumOf(before, 'autovacuums'),
    received: received.mail,
    hooks: received.hooks,
    cpu: { api: cpu.mainCpuPercentOfCore, workers: cpu.workerCpuPercentOfCore, db: cpu.dbCpuPercentOfCore },
  };
}

function progressionTable(minutes, tracks, sends, rss) {
  const head =
    '   m  track/s  p50  p99  err  send p50  p99  err   RSS MB (each process)   events  emails  hooks/s  hist MB  all MB    dead  ev del  em del  key del  wh del  autovac  API%  wrk%  PG%';
  const lines = minutes.map((row) => {
    const m = row.minute - 1; // the sample at the start of minute m+1 closes minute m
    const t = tracks.window(m, m + 1);
    const s = sends.window(m, m + 1);
    const peaks = Object.values(rss[m] ?? {})
      .map((v) => Math.round(v))
      .join('/');
    return [
      String(m).padStart(4),
      String(Math.round(t.n / 60)).padStart(8),
      String(t.p50).padStart(4),
      String(t.p99).padStart(4),
      String(t.errors).padStart(4),
      String(s.p50).padStart(9),
      String(s.p99).padStart(4),
      String(s.errors).padStart(4),
      peaks.padStart(24),
      String(row.events).padStart(8),
      String(row.emails).padStart(7),
      String(Math.round(row.hooks / 60)).padStart(8),
      String(mb(row.historyBytes)).padStart(8),
      String(mb(row.allBytes)).padStart(7),
      String(row.dead).padStart(7),
      String(row.eventsDeleted).padStart(7),
      String(row.emailsDeleted).padStart(7),
      String(row.keysDeleted).padStart(8),
      String(row.deliveriesDeleted).padStart(7),
      String(row.autovacuums).padStart(8),
      String(Math.round(row.cpu.api ?? 0)).padStart(5),
      String(Math.round(row.cpu.workers ?? 0)).padStart(5),
      String(Math.round(row.cpu.db ?? 0)).padStart(4),
    ].join(' ');
  });
  return ['```', head, ...lines, '```'].join('\n');
}
