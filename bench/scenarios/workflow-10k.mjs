import { fmt, r1, waitFeedDrained } from '../lib/segments.mjs';
import { percentile, SENDER, sleep, verifiedSenderDomain } from '../lib/sending.mjs';
import {
  buildWorkflow,
  CLAIM_SQL,
  cpuWindow,
  createTemplate,
  executionCounts,
  pacedTracks,
  processSnapshot,
  RESUME_EVENTS_SQL,
  START_CANDIDATES_SQL,
  seedContacts,
  waitWorkflowConsumer,
} from '../lib/workflows.mjs';

/**
 * 10,000 contacts through a 3-step workflow, started by tracked events. On a Pigeon of its own with
 * SMTP_URL on the harness's SMTP sink and the verified, DKIM-signing sender domain bench.example.
 *
 * Setup: TOTAL subscribed contacts seeded in SQL (`wf<i>@workflow.example`, data {plan: "pro",
 * firstName}), VACUUM ANALYZE, change feed drained; a TRANSACTIONAL template (subject and body
 * render the event's orderId and the contact's firstName); the workflow, built through the API:
 * trigger `order.placed`, CONDITION `data.plan equals "pro"` (yes → SEND_EMAIL → EXIT, no → EXIT:
 * every seeded contact takes yes), enabled. One probe track runs the whole path once (warms the
 * SMTP pool, the DKIM key, the graph cache) and the sink is reset.
 *
 * Timed task: TOTAL POST /v1/track `{email: wf<i>@…, event: "order.placed", data: {orderId}}`
 * (secret key), each contact once, at a steady RATE per second (open loop, at most MAX_IN_FLIGHT
 * outstanding), while one harness connection polls the executions' statuses, the emails QUEUED and
 * SENDING, and the sink's count, once a second.
 * Then it waits until every execution is finished and every email at the sink (at most GIVE_UP_SECONDS
 * after the last track).
 *
 * Measured: seconds from the last track's answer to the last execution's completed_at (target ≤ 60 s);
 * per message, the sink's receipt − the answer of the track that caused it (matched by envelope
 * recipient: one email per contact), p50 (target ≤ 1 s) and p95; the stages from the database
 * (event created → execution started by the change feed → execution completed by a runner, which
 * queued the email in that transaction → at the sink); CPU of the API process, the worker
 * process(es), PostgreSQL and the sink. Checks: TOTAL executions, all EXITED, TOTAL emails with
 * workflow_execution_id, each recipient at the sink exactly once, DKIM-signed. For where the time
 * goes: PostgreSQL's transactions and rows per execution and the indexes by entries read
 * (pg_stat_* deltas), autovacuum during the run, and EXPLAIN ANALYZE of the change feed's workflow
 * statements half way through (diagnose: again after the run, before and after ANALYZE events).
 *
 * BENCH_WORKFLOW_CONTACTS and BENCH_WORKFLOW_RATE (environment) shrink or change the run, e.g. to
 * try it with 1,000.
 */
const TOTAL = Number(process.env.BENCH_WORKFLOW_CONTACTS ?? 10_000);
const RATE = Number(process.env.BENCH_WORKFLOW_RATE ?? 100);
const MAX_IN_FLIGHT = 32;
const GIVE_UP_SECONDS = 300;
// The poller's count over this workflow's executions reads every one of them: once a second is
// enough for the progression and costs PostgreSQL little (its rows are reported).
const POLL_MS = 1000;
const DOMAIN = 'workflow.example';
const EVENT = 'order.placed';

const now = () => performance.timeOrigin + performance.now(); // epoch ms, as the sink records
const ms = (v) => (v === null || v === undefined ? null : Math.round(v));
const pcts = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: ms(percentile(s, 50)), p95: ms(percentile(s, 95)), p99: ms(percentile(s, 99)), max: ms(s.at(-1)) };
};
/** PostgreSQL's counters of this database (pg_stat_database: flushed by each backend within about a second). */
async function dbCounters(ctx) {
  const { rows } = await ctx.sql(
    `SELECT (xact_commit + xact_rollback)::bigint AS xacts, tup_returned::bigint AS returned, tup_fetched::bigint AS fetched,
            tup_inserted::bigint AS inserted, tup_updated::bigint AS updated, tup_deleted::bigint AS deleted
     FROM pg_stat_database WHERE datname = current_database()`,
  );
  return Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, Number(v)]));
}

/** Per index: scans, index entries read and heap rows fetched (pg_stat_user_indexes). */
async function indexCounters(ctx) {
  const { rows } = await ctx.sql(
    `SELECT relname, indexrelname, idx_scan::bigint AS scans, idx_tup_read::bigint AS read, idx_tup_fetch::bigint AS fetched
     FROM pg_stat_user_indexes`,
  );
  return new Map(
    rows.map((r) => [
      `${r.relname}.${r.indexrelname}`,
      { scans: Number(r.scans), read: Number(r.read), fetched: Number(r.fetched) },
    ]),
  );
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the workflow consumer's statements (startFromEvents' candidates,
 * resumeWaiting's events) for batches of the newest 1, 5 and 50 tracked events, as the change feed
 * hands them over (at 100 tracks/s a round every 50 ms finds a few per part): read-only, a few
 * milliseconds each, with `events`' statistics as they are at that moment.
 */
async function explainBatch(ctx, answered) {
  const { rows: recent } = await ctx.sql(
    `SELECT id FROM events WHERE project_id = $1 AND name = $2 ORDER BY created_at DESC LIMIT 50`,
    [ctx.projectId, EVENT],
  );
  const { rows: stats } = await ctx.sql(
    `SELECT n_live_tup, last_analyze, last_autoanalyze FROM pg_stat_user_tables WHERE relname = 'events'`,
  );
  const out = [];
  for (const size of [1, 5, 50]) {
    const ids = recent.slice(0, size).map((r) => r.id);
    for (const [title, text] of [
      ["startFromEvents' candidates", START_CANDIDATES_SQL],
      ["resumeWaiting's events", RESUME_EVENTS_SQL],
    ]) {
      const { rows } = await ctx.sql(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, [ctx.projectId, ids]);
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      const scans = plan
        .split('\n')
        .filter((l) => /Scan|Rows Removed/.test(l))
        .map((l) => l.replace(/^[\s->]+/, '').replace(/\s+\(cost=.*$/, ''))
        .join('; ');
      const ms = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? Number.NaN);
      const buffers = Number(/Buffers: shared hit=(\d+)/.exec(plan)?.[1] ?? Number.NaN);
      out.push({ title, size, text, plan, scans, ms, buffers });
    }
  }
  return { answered, events: stats[0], statements: out };
}

/** Autovacuum and autoanalyze runs per table so far, and the last of each (epoch ms). */
async function vacuumCounters(ctx) {
  const { rows } = await ctx.sql(
    `SELECT relname, autovacuum_count::int AS vacuums, autoanalyze_count::int AS analyzes,
            extract(epoch FROM last_autovacuum) * 1000 AS vacuum_at, extract(epoch FROM last_autoanalyze) * 1000 AS analyze_at
     FROM pg_stat_user_tables`,
  );
  return new Map(
    rows.map((r) => [
      r.relname,
      { vacuums: r.vacuums, analyzes: r.analyzes, vacuumAt: Number(r.vacuum_at), analyzeAt: Number(r.analyze_at) },
    ]),
  );
}

const r0 = (r) => String(r.events.last_autoanalyze ?? r.events.last_analyze ?? 'never');

/** Emails waiting for the delivery workers (QUEUED) and being delivered (SENDING). */
async function queuedEmails(ctx) {
  // One count per status, so each is answered from its partial index (emails_queue, emails_claimed).
  const { rows } = await ctx.sql(
    `SELECT (SELECT count(*) FROM emails WHERE status = 'QUEUED')::int AS queued,
            (SELECT count(*) FROM emails WHERE status = 'SENDING')::int AS sending`,
  );
  return rows[0];
}
const showPcts = (p) => `p50 ${fmt(p.p50)} ms, p95 ${fmt(p.p95)} ms, p99 ${fmt(p.p99)} ms, max ${fmt(p.max)} ms`;

export default {
  name: 'workflow-10k',
  description: `${fmt(TOTAL)} tracked events (${fmt(RATE)}/s) start CONDITION → SEND_EMAIL → EXIT; emails into the SMTP sink`,
  smtpSink: true,
  pigeonEnv: ({ smtpSink }) => ({ SMTP_URL: smtpSink.url }),
  target: [
    {
      metric: 'allFinishedSeconds',
      max: 60,
      unit: 's',
      digits: 1,
      label: `all ${fmt(TOTAL)} executions COMPLETED/EXITED ≤ 60 s after the last track`,
    },
    {
      metric: 'eventToEmailP50Ms',
      max: 1000,
      unit: 'ms',
      digits: 0,
      label: 'event (track answered) → email at the sink p50 ≤ 1 s',
    },
  ],

  async setup(ctx) {
    await waitWorkflowConsumer(ctx);
    await verifiedSenderDomain(ctx);
    let t0 = performance.now();
    await seedContacts(ctx, { prefix: 'wf', domain: DOMAIN, count: TOTAL });
    const seedS = (performance.now() - t0) / 1000;
    const feedS = await waitFeedDrained(ctx);

    const templateId = await createTemplate(ctx, {
      name: 'order confirmation',
      subject: 'Order {{event.orderId}} confirmed, {{firstName ?? "friend"}}',
      body:
        '<p>Hello {{firstName ?? "there"}},</p><p>thanks for order <b>{{event.orderId}}</b> on the ' +
        '{{data.plan}} plan. We will let you know when it ships.</p>',
      from: SENDER,
      type: 'TRANSACTIONAL',
    });
    const wf = await buildWorkflow(ctx, {
      name: `orders ${Date.now().toString(36)}`,
      trigger: EVENT,
      steps: [
        { key: 'pro?', type: 'CONDITION', config: { field: 'data.plan', operator: 'equals', value: 'pro' } },
        { key: 'mail', type: 'SEND_EMAIL', config: { templateId } },
        { key: 'done', type: 'EXIT', config: { reason: 'mailed' } },
      ],
      transitions: [
        ['pro?', 'mail', 'yes'],
        ['pro?', 'done', 'no'],
        ['mail', 'done'],
      ],
    });

    // One track through the whole path: SMTP pool, DKIM key, graph cache, code paths.
    t0 = performance.now();
    const probe = `probe@${DOMAIN}`;
    await ctx.json('/v1/track', {
      method: 'POST',
      headers: ctx.auth,
      json: { email: probe, event: EVENT, data: { plan: 'pro', orderId: 'probe' } },
    });
    const answered = now();
    const deadline = Date.now() + 30_000;
    for (;;) {
      const s = await ctx.smtpSink.stats();
      const c = await executionCounts(ctx, wf.id);
      if (s.count >= 1 && c.exited + c.completed >= 1) break;
      if (c.failed) throw new Error('the probe execution FAILED');
      if (Date.now() > deadline)
        throw new Error(`probe: no email at the sink 30 s after its track (executions ${JSON.stringify(c)})`);
      await sleep(20, ctx.signal);
    }
    const [msg] = await ctx.smtpSink.messages();
    if (!msg.dkim) throw new Error('the probe email has no DKIM-Signature');
    const probeMs = msg.at - answered;
    await ctx.smtpSink.reset();
    const before = await executionCounts(ctx, wf.id);
    Object.assign(ctx.state, { workflowId: wf.id, templateId, before, probeMs });
    ctx.note(
      `setup: ${fmt(TOTAL)} contacts seeded + VACUUM ANALYZE in ${fmt(seedS, 1)} s, change feed drained in ` +
        `${fmt(feedS ?? 0, 1)} s; workflow ${wf.id} (trigger ${EVENT}: CONDITION data.plan = "pro" → yes SEND_EMAIL → EXIT, ` +
        `no → EXIT); probe track → email at the sink in ${fmt(probeMs)} ms (cold, idle loops) ` +
        `(${fmt((performance.now() - t0) / 1000, 1)} s)`,
    );
  },

  async run(ctx) {
    const { workflowId, before } = ctx.state;
    const sink = ctx.smtpSink;
    const progression = []; // { s, answered, started, finished, received, workerRssMb }
    const db0 = await dbCounters(ctx);
    const idx0 = await indexCounters(ctx);
    const vacuums0 = await vacuumCounters(ctx);
    const snap0 = processSnapshot(ctx);
    const startAt = now();
    let answered = 0;
    let tracking = true;
    let lastTrackAt = null;
    let doneAt = null;
    let maxWorkerRss = 0;
    let failure = null;
    let harnessRows = 0; // rows the poller's counts read
    let midPlan = null; // the feed's startFromEvents candidates, EXPLAINed half way through

    // Poller: statuses and the sink, every POLL_MS, until all are finished and at the sink.
    const poller = (async () => {
      for (;;) {
        const [c, s, q] = await Promise.all([executionCounts(ctx, workflowId), sink.stats(), queuedEmails(ctx)]);
        harnessRows += c.total + q.queued + q.sending;
        const snap = processSnapshot(ctx);
        const workerRss = snap.workers.reduce((n, p) => n + (snap.rss[p] ?? 0), 0);
        maxWorkerRss = Math.max(maxWorkerRss, workerRss);
        const finished = c.completed + c.exited + c.failed + c.cancelled - (before.completed + before.exited);
        const t = now();
        progression.push({
          s: r1((t - startAt) / 1000),
          answered,
          started: c.total - before.total,
          running: c.running,
          finished,
          queued: q.queued,
          sending: q.sending,
          received: s.count,
          workerRssMb: Math.round(workerRss),
          mainRssMb: Math.round(snap.rss[snap.main] ?? 0),
        });
        if (!midPlan && answered >= TOTAL / 2) midPlan = await explainBatch(ctx, answered);
        if (!tracking && finished >= answered && s.count >= answered - c.failed) {
          doneAt = t;
          return;
        }
        if (failure) return;
        if (!tracking && t - lastTrackAt > GIVE_UP_SECONDS * 1000) {
          failure = `after ${GIVE_UP_SECONDS} s: ${fmt(finished)} of ${fmt(answered)} executions finished, ${fmt(s.count)} emails at the sink`;
          return;
        }
        await sleep(POLL_MS, ctx.signal);
      }
    })();

    let tracks;
    try {
      tracks = await pacedTracks(ctx, {
        total: TOTAL,
        rate: RATE,
        maxInFlight: MAX_IN_FLIGHT,
        body: (i) => ({ email: `wf${i}@${DOMAIN}`, event: EVENT, data: { orderId: `o-${i}` } }),
        onAnswer: (r) => {
          if (r.status === 200) answered++;
        },
      });
    } catch (err) {
      failure ??= `tracking failed: ${err.message}`;
      lastTrackAt = now();
      tracking = false;
      await poller;
      throw err;
    }
    const ok = tracks.results.filter((r) => r.status === 200);
    if (!ok.length) {
      failure ??= 'no track was answered 200';
      tracking = false;
      await poller;
      const r = tracks.results[0];
      throw new Error(`every POST /v1/track failed, e.g. ${r?.status} ${r?.error ?? ''}`);
    }
    answered = ok.length;
    lastTrackAt = Math.max(...ok.map((r) => r.answeredAt));
    tracking = false;
    const snapTracked = processSnapshot(ctx);
    await poller;
    const snapDone = processSnapshot(ctx);
    await sleep(1500, ctx.signal); // the backends' statistics flushed
    const db1 = await dbCounters(ctx);
    const idx1 = await indexCounters(ctx);
    // Autovacuum and autoanalyze that ran during the run (they compete with it for CPU).
    const vacuums1 = await vacuumCounters(ctx);
    const autovacuum = [...vacuums1].flatMap(([table, v]) => {
      const v0 = vacuums0.get(table) ?? { vacuums: 0, analyzes: 0 };
      return [
        ...(v.vacuums > v0.vacuums
          ? [{ table, what: 'vacuum', times: v.vacuums - v0.vacuums, lastS: r1((v.vacuumAt - startAt) / 1000) }]
          : []),
        ...(v.analyzes > v0.analyzes
          ? [{ table, what: 'analyze', times: v.analyzes - v0.analyzes, lastS: r1((v.analyzeAt - startAt) / 1000) }]
          : []),
      ];
    });
    const indexes = [...idx1]
      .map(([name, b]) => {
        const a = idx0.get(name) ?? { scans: 0, read: 0, fetched: 0 };
        return { name, scans: b.scans - a.scans, read: b.read - a.read, fetched: b.fetched - a.fetched };
      })
      .filter((i) => i.scans > 0)
      .sort((x, y) => y.read - x.read);
    const perExecution = Object.fromEntries(
      Object.keys(db0).map((k) => [k, answered ? Number(((db1[k] - db0[k]) / answered).toFixed(1)) : null]),
    );

    // ---- per message: sink receipt − the track's answer, by recipient ----------------------------
    const answeredAt = new Map(ok.map((r) => [`wf${r.i}@${DOMAIN}`, r.answeredAt]));
    const messages = await sink.messages();
    const perRecipient = new Map();
    let withoutDkim = 0;
    let unexpected = 0;
    for (const m of messages) {
      if (!m.dkim) withoutDkim++;
      if (!answeredAt.has(m.to)) {
        unexpected++;
        continue;
      }
      perRecipient.set(m.to, [...(perRecipient.get(m.to) ?? []), m.at]);
    }
    const latencies = [];
    let duplicates = 0;
    for (const [to, ats] of perRecipient) {
      duplicates += ats.length - 1;
      latencies.push(Math.min(...ats) - answeredAt.get(to));
    }
    const missing = answered - perRecipient.size;
    const eventToEmail = pcts(latencies);

    // ---- the stages, from the database ---------------------------------------------------------
    const { rows } = await ctx.sql(
      `SELECT ct.email, x.status,
              extract(epoch FROM e.created_at) * 1000 AS event_at,
              extract(epoch FROM x.started_at) * 1000 AS started_at,
              extract(epoch FROM x.completed_at) * 1000 AS completed_at,
              extract(epoch FROM m.created_at) * 1000 AS queued_at,
              extract(epoch FROM m.sent_at) * 1000 AS sent_at,
              m.status AS email_status
       FROM workflow_executions x
       JOIN contacts ct ON ct.id = x.contact_id
       LEFT JOIN events e ON e.id = x.trigger_event_id
       LEFT JOIN emails m ON m.workflow_execution_id = x.id
       WHERE x.workflow_id = $1 AND ct.email LIKE 'wf%@${DOMAIN}'`,
      [workflowId],
    );
    const num = (v) => (v === null ? null : Number(v));
    const stage = {
      answerToStart: [],
      startToComplete: [],
      completeToSink: [],
      completeToSent: [],
      eventToComplete: [],
    };
    const byStatus = {};
    let completedMax = null;
    let emailRows = 0;
    let emailsSent = 0;
    for (const r of rows) {
      byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
      const started = num(r.started_at);
      const completed = num(r.completed_at);
      if (completed !== null) completedMax = Math.max(completedMax ?? 0, completed);
      if (r.email_status) emailRows++;
      if (r.email_status === 'SENT') emailsSent++;
      const ans = answeredAt.get(r.email);
      if (ans !== undefined && started !== null) stage.answerToStart.push(started - ans);
      if (started !== null && completed !== null) stage.startToComplete.push(completed - started);
      if (num(r.event_at) !== null && completed !== null) stage.eventToComplete.push(completed - num(r.event_at));
      const at = perRecipient.get(r.email)?.[0];
      if (at !== undefined && completed !== null) stage.completeToSink.push(at - completed);
      if (num(r.sent_at) !== null && completed !== null) stage.completeToSent.push(num(r.sent_at) - completed);
    }
    const stages = Object.fromEntries(Object.entries(stage).map(([k, v]) => [k, pcts(v)]));
    const allFinishedSeconds = completedMax === null ? null : Math.max(0, (completedMax - lastTrackAt) / 1000);
    const lastEmailSeconds = messages.length ? (Math.max(...messages.map((m) => m.at)) - lastTrackAt) / 1000 : null;

    // ---- rates, CPU ----------------------------------------------------------------------------
    const trackMs = ok.map((r) => r.answeredAt - r.sentAt);
    const trackSeconds = (lastTrackAt - tracks.startedAt) / 1000;
    const tracking_ = cpuWindow(snap0, snapTracked);
    const whole = cpuWindow(snap0, snapDone);
    const completions = rows
      .map((r) => num(r.completed_at))
      .filter((v) => v !== null)
      .sort((a, b) => a - b);
    const steadyPerSec =
      completions.length >= 10
        ? (0.8 * completions.length) /
          ((completions[Math.floor(0.9 * completions.length) - 1] - completions[Math.floor(0.1 * completions.length)]) /
            1000)
        : null;

    const problems = [];
    if (failure) problems.push(failure);
    const failedTracks = tracks.results.filter((r) => r && r.status !== 200);
    if (failedTracks.length)
      problems.push(
        `${fmt(failedTracks.length)} tracks failed (e.g. ${failedTracks[0].status} ${failedTracks[0].error ?? ''})`,
      );
    if (rows.length !== answered) problems.push(`${fmt(rows.length)} executions for ${fmt(answered)} tracks`);
    const notExited = rows.length - (byStatus.EXITED ?? 0);
    if (notExited) problems.push(`${fmt(notExited)} executions not EXITED (${JSON.stringify(byStatus)})`);
    if (emailRows !== answered) problems.push(`${fmt(emailRows)} workflow emails for ${fmt(answered)} executions`);
    if (missing) problems.push(`${fmt(missing)} recipients got no email`);
    if (duplicates) problems.push(`${fmt(duplicates)} duplicate emails`);
    if (unexpected) problems.push(`${fmt(unexpected)} emails to unexpected recipients`);
    if (withoutDkim) problems.push(`${fmt(withoutDkim)} emails without DKIM-Signature`);

    // ---- report --------------------------------------------------------------------------------
    const table = [
      '     s  answered   started   running  finished   QUEUED  SENDING  at sink  worker RSS MB  main RSS MB',
    ];
    let lastS = -1;
    for (const [i, p] of progression.entries()) {
      if (i !== progression.length - 1 && Math.floor(p.s) === lastS) continue;
      lastS = Math.floor(p.s);
      table.push(
        `${p.s.toFixed(1).padStart(6)} ${String(p.answered).padStart(9)} ${String(p.started).padStart(9)} ` +
          `${String(p.running).padStart(9)} ${String(p.finished).padStart(9)} ${String(p.queued).padStart(8)} ` +
          `${String(p.sending).padStart(8)} ${String(p.received).padStart(8)} ` +
          `${String(p.workerRssMb).padStart(14)} ${String(p.mainRssMb).padStart(12)}`,
      );
    }
    ctx.attach(
      'progression (s since the first track: tracks answered; executions started, RUNNING, finished; emails QUEUED, SENDING, at the sink)',
      table.join('\n'),
    );
    ctx.note(
      `tracks: ${fmt(answered)} POST /v1/track at ${fmt(RATE)}/s asked, ${fmt(answered / trackSeconds, 1)}/s done ` +
        `(${fmt(trackSeconds, 1)} s, ${fmt(tracks.late)} sent > 50 ms late: ${MAX_IN_FLIGHT} in flight), track latency ` +
        `p50 ${fmt(
          percentile(
            [...trackMs].sort((a, b) => a - b),
            50,
          ),
          1,
        )} ms, p99 ${fmt(
          percentile(
            [...trackMs].sort((a, b) => a - b),
            99,
          ),
          1,
        )} ms`,
    );
    ctx.note(
      `event → email at the sink (track answered → end of DATA, per recipient): ${showPcts(eventToEmail)}; ` +
        `the probe (one execution, idle system) took ${fmt(ctx.state.probeMs)} ms`,
    );
    ctx.note(
      `stages (database timestamps are transaction starts): track answered → execution started by the change feed ` +
        `${showPcts(stages.answerToStart)}; started → completed by a runner (claim wait + CONDITION + SEND_EMAIL queued + EXIT) ` +
        `${showPcts(stages.startToComplete)}; completed (= email queued, same transaction) → email at the sink ` +
        `${showPcts(stages.completeToSink)} (→ SENT in the database ${showPcts(stages.completeToSent)})`,
    );
    ctx.note(
      `finish: last execution completed ${fmt(allFinishedSeconds, 1)} s and last email at the sink ${fmt(lastEmailSeconds, 1)} s ` +
        `after the last track was answered; executions completed at ${fmt(steadyPerSec)}/s (10th → 90th percentile); ` +
        `statuses ${JSON.stringify(byStatus)}, ${fmt(emailRows)} email rows (${fmt(emailsSent)} SENT), ${fmt(messages.length)} at the sink`,
    );
    const show = (w) =>
      `API process ${fmt(w.mainCpuPercentOfCore)}%, worker process${Object.keys(w.perWorkerCpuPercentOfCore).length === 1 ? '' : 'es'} ` +
      `${fmt(w.workerCpuPercentOfCore)}%, PostgreSQL ${fmt(w.dbCpuPercentOfCore)}%, sink ${fmt(w.sinkCpuPercentOfCore)}%, ` +
      `harness ${fmt(w.harnessCpuPercentOfCore)}%, other ${fmt(w.otherCpuPercentOfCore)}% of a core`;
    ctx.note(
      `CPU while tracking (${fmt(tracking_.seconds, 1)} s): ${show(tracking_)}; whole run (${fmt(whole.seconds, 1)} s): ${show(whole)}; ` +
        `${snapDone.workers.length} worker process(es); worker RSS max ${fmt(maxWorkerRss)} MB sampled. ` +
        `(The harness's "DB CPU" column counts the worker processes too.)`,
    );
    ctx.attach(
      'index use during the run (pg_stat_user_indexes deltas, includes the harness), by entries read',
      [
        'index                                                   scans   entries read   per scan   heap fetched   per execution read',
        ...indexes
          .slice(0, 15)
          .map(
            (i) =>
              `${i.name.padEnd(52)} ${String(i.scans).padStart(9)} ${String(i.read).padStart(14)} ` +
              `${(i.read / i.scans).toFixed(1).padStart(10)} ${String(i.fetched).padStart(14)} ` +
              `${(i.read / answered).toFixed(1).padStart(20)}`,
          ),
      ].join('\n'),
    );
    if (midPlan) {
      const ev = midPlan.events;
      for (const st of midPlan.statements) {
        if (st.size === 1 || st.size === 50)
          ctx.attach(
            `EXPLAIN (ANALYZE, BUFFERS) of ${st.title} (executions.ts, the change feed's workflow consumer) for a batch ` +
              `of ${st.size} tracked event${st.size > 1 ? 's' : ''}, taken after ${fmt(midPlan.answered)} tracks; events had ` +
              `${fmt(Number(ev.n_live_tup))} live rows, last analyzed ${ev.last_autoanalyze ?? ev.last_analyze ?? 'never'}`,
            `${st.text}\n\n${st.plan}`,
          );
      }
      ctx.note(
        `mid-run EXPLAIN (after ${fmt(midPlan.answered)} tracks) of the change feed's workflow consumer per batch size: ` +
          midPlan.statements
            .map((st) => `${st.title} × ${st.size}: ${fmt(st.ms, 2)} ms, ${fmt(st.buffers)} buffers (${st.scans})`)
            .join('; '),
      );
    }
    ctx.note(
      `autovacuum during the run (times, and the last one in s after the first track): ` +
        (autovacuum.length
          ? autovacuum
              .sort((x, y) => x.lastS - y.lastS)
              .map((v) => `${v.what} ${v.table} ×${v.times} (${fmt(v.lastS, 1)})`)
              .join(', ')
          : 'none'),
    );
    const topIndex = indexes[0];
    if (topIndex)
      ctx.note(
        `most index entries read: ${topIndex.name}, ${fmt(topIndex.read)} in ${fmt(topIndex.scans)} scans ` +
          `(${fmt(topIndex.read / topIndex.scans, 1)} a scan, ${fmt(topIndex.read / answered, 1)} per execution); see the attachment`,
      );
    ctx.note(
      `PostgreSQL per execution (pg_stat_database over the whole run, everything included: the track, the change feed, ` +
        `the runner, delivery, the harness's polling): ${fmt(perExecution.xacts, 1)} transactions, rows returned ` +
        `${fmt(perExecution.returned, 1)}, fetched ${fmt(perExecution.fetched, 1)}, inserted ${fmt(perExecution.inserted, 1)}, ` +
        `updated ${fmt(perExecution.updated, 1)}, deleted ${fmt(perExecution.deleted, 1)} (the harness's polling read about ` +
        `${fmt(harnessRows / answered, 1)} rows per execution of those); CPU per execution: worker ` +
        `${fmt((whole.workerCpuSeconds / answered) * 1000, 2)} ms, API ${fmt((whole.mainCpuSeconds / answered) * 1000, 2)} ms, ` +
        `PostgreSQL ${fmt((whole.dbCpuSeconds / answered) * 1000, 2)} ms`,
    );
    return {
      allFinishedSeconds: allFinishedSeconds === null ? null : Number(allFinishedSeconds.toFixed(2)),
      eventToEmailP50Ms: eventToEmail.p50,
      eventToEmailP95Ms: eventToEmail.p95,
      eventToEmailP99Ms: eventToEmail.p99,
      eventToEmailMaxMs: eventToEmail.max,
      lastEmailSeconds: lastEmailSeconds === null ? null : Number(lastEmailSeconds.toFixed(2)),
      // when the poller (every POLL_MS) saw everything finished and at the sink
      doneSeenSeconds: doneAt === null ? null : Number(((doneAt - lastTrackAt) / 1000).toFixed(2)),
      stages,
      trackRateAsked: RATE,
      trackRate: Number((answered / trackSeconds).toFixed(1)),
      trackSeconds: Number(trackSeconds.toFixed(2)),
      tracksLate: tracks.late,
      executionsPerSecSteady: steadyPerSec === null ? null : Math.round(steadyPerSec),
      executions: rows.length,
      statuses: byStatus,
      emailRows,
      received: messages.length,
      missing,
      duplicates,
      withoutDkim,
      dbPerExecution: perExecution,
      indexes: indexes.slice(0, 15),
      autovacuum,
      cpuTracking: tracking_,
      cpuWhole: whole,
      workerProcesses: snapDone.workers.length,
      maxWorkerRssMb: Math.round(maxWorkerRss),
      progression,
      problem: problems.length ? problems.join('; ') : undefined,
      summary:
        `${fmt(answered)} tracks at ${fmt(answered / trackSeconds)}/s: all finished ${fmt(allFinishedSeconds, 1)} s after the last track; ` +
        `event → email p50 ${fmt(eventToEmail.p50)} ms, p95 ${fmt(eventToEmail.p95)} ms; ` +
        `${fmt(steadyPerSec)} executions/s; worker ${fmt(whole.workerCpuPercentOfCore)}%, API ${fmt(whole.mainCpuPercentOfCore)}%, ` +
        `PostgreSQL ${fmt(whole.dbCpuPercentOfCore)}%, other processes ${fmt(whole.otherCpuPercentOfCore)}% of a core`,
    };
  },

  async diagnose(ctx) {
    // startFromEvents for a 5-event batch with `events`' statistics as the run left them, then
    // after ANALYZE events: does the plan read every event of the trigger's name only for want of
    // statistics?
    const before = await explainBatch(ctx, null);
    await ctx.sql('ANALYZE events');
    const after = await explainBatch(ctx, null);
    const pick = (r) => r.statements.find((st) => st.size === 5 && st.title.startsWith('startFromEvents'));
    for (const [when, r] of [
      [`as the run left the statistics (events last analyzed ${r0(before)})`, before],
      ['after ANALYZE events', after],
    ]) {
      const st = pick(r);
      ctx.note(`after the run, ${st.title} × 5 ${when}: ${fmt(st.ms, 2)} ms, ${fmt(st.buffers)} buffers (${st.scans})`);
      ctx.attach(`EXPLAIN (ANALYZE, BUFFERS) of ${st.title} for 5 events, after the run, ${when}`, st.plan);
    }
    // The runner's claim with what is left in the table (every execution finished): the partial
    // index on wake_at should answer it without touching the finished rows.
    await ctx.sql('BEGIN');
    try {
      const { rows } = await ctx.sql(`EXPLAIN (ANALYZE, BUFFERS) ${CLAIM_SQL}`);
      ctx.attach(
        "EXPLAIN (ANALYZE, BUFFERS) of the runner's claim (runner.ts runOne), after the run",
        rows.map((r) => r['QUERY PLAN']).join('\n'),
      );
    } finally {
      await ctx.sql('ROLLBACK');
    }
    const { rows: tables } = await ctx.sql(
      `SELECT relname, seq_scan, seq_tup_read, idx_scan, n_tup_ins, n_tup_upd, n_dead_tup
       FROM pg_stat_user_tables WHERE relname IN ('workflow_executions', 'workflow_step_runs', 'emails', 'events',
         'contacts', 'contact_changes', 'change_feed_cursors', 'workflows', 'workflow_steps', 'workflow_transitions', 'templates', 'domains')
       ORDER BY seq_tup_read DESC`,
    );
    ctx.attach(
      'pg_stat_user_tables after the run (sequential scans and rows they read)',
      [
        'table                     seq_scan  seq_tup_read    idx_scan   n_tup_ins   n_tup_upd  n_dead_tup',
        ...tables.map(
          (t) =>
            `${t.relname.padEnd(24)} ${String(t.seq_scan).padStart(9)} ${String(t.seq_tup_read).padStart(13)} ` +
            `${String(t.idx_scan ?? '').padStart(11)} ${String(t.n_tup_ins).padStart(11)} ${String(t.n_tup_upd).padStart(11)} ` +
            `${String(t.n_dead_tup).padStart(11)}`,
        ),
      ].join('\n'),
    );
  },
};
