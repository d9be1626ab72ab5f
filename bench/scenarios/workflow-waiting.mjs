import { fmt, waitFeedDrained } from '../lib/segments.mjs';
import { sleep } from '../lib/sending.mjs';
import {
  buildWorkflow,
  CLAIM_SQL,
  collectGarbage,
  cpuWindow,
  executionCounts,
  pacedTracks,
  processSnapshot,
  seedContacts,
  waitWorkflowConsumer,
} from '../lib/workflows.mjs';

/**
 * What 10,000 executions WAITING on a 1-hour DELAY cost Pigeon's worker process(es) while they wait.
 * On a Pigeon of its own (defaults: WORKER_PROCESSES forks one worker on the 2-core machine), with
 * NODE_OPTIONS=--inspect-port=0 so that a SIGUSR1 opens a worker's inspector on a free port.
 *
 * Setup: 2 × TOTAL contacts seeded in SQL, change feed drained; the workflow `trial.started`:
 * DELAY 1 hour → EXIT, built through the API and enabled; a warm-up workflow of the same shape
 * (`warmup.started`) gets TOTAL executions through the same path (tracks → change feed → runner →
 * WAITING), which are then cancelled (POST /workflows/:id/executions/cancel-all): the worker has run
 * every code path as often as it will for the measured load, and nothing waits.
 *
 * Timed task (the worker's inspector is opened first: SIGUSR1, then a CDP WebSocket):
 *   1. idle: SETTLE_SECONDS quiet, then WINDOW_SECONDS of CPU of every Pigeon process (the
 *      worker's from /proc/<pid>/stat utime + stime) with no execution waiting, the worker's RSS
 *      (VmRSS) sampled every second; then a full collection in the worker
 *      (HeapProfiler.collectGarbage) and its RSS and V8 heap used;
 *   2. loading: TOTAL POST /v1/track `trial.started` (one per contact, MAX_IN_FLIGHT at a time, as
 *      fast as Pigeon answers) until TOTAL executions are WAITING;
 *   3. waiting: the same as 1 with TOTAL waiting. No harness query runs during either window.
 * Then checks that all TOTAL are still WAITING with wake_at about an hour ahead.
 *
 * Targets: the worker processes' CPU while TOTAL wait minus their CPU idle with none ≤ 0.5% of a
 * core (the loops poll the database whatever waits: that idle cost is reported, not judged; the
 * waiting executions themselves must add nothing beyond the noise), and the worker's RSS after a
 * full collection, waiting − idle, ≤ 20 MB. Without the forced collection, RSS swings by tens of
 * MB with when V8 happens to collect the loading burst's garbage: those numbers are in the notes.
 *
 * BENCH_WORKFLOW_WAITING and BENCH_WORKFLOW_WINDOW_SECONDS (environment) shrink the run.
 */
const TOTAL = Number(process.env.BENCH_WORKFLOW_WAITING ?? 10_000);
const WINDOW_SECONDS = Number(process.env.BENCH_WORKFLOW_WINDOW_SECONDS ?? 30);
// As many as are measured: the idle state then follows the same work as the waiting state does
// (compiled code, grown pools and caches are in both).
const WARMUP = TOTAL;
const SETTLE_SECONDS = Math.min(10, WINDOW_SECONDS);
const MAX_IN_FLIGHT = 16;
const GIVE_UP_SECONDS = 300;
const DOMAIN = 'waiting.example';
const EVENT = 'trial.started';
const WARMUP_EVENT = 'warmup.started';
const DELAY = { amount: 1, unit: 'hours' };

const round = (v, d = 1) => (v === null || v === undefined || Number.isNaN(v) ? null : Number(v.toFixed(d)));
const workerRss = (ctx) => {
  const snap = processSnapshot(ctx);
  return {
    total: snap.workers.reduce((n, p) => n + (snap.rss[p] ?? 0), 0),
    workers: snap.workers,
    main: snap.rss[snap.main],
  };
};

/** Database-side counters: transactions and index scans of workflow_executions (the runner's claims). */
async function dbCounters(ctx) {
  const { rows } = await ctx.sql(
    `SELECT (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database())::bigint AS xacts,
            (SELECT idx_scan FROM pg_stat_user_tables WHERE relname = 'workflow_executions')::bigint AS exec_idx_scans,
            (SELECT seq_scan FROM pg_stat_user_tables WHERE relname = 'workflow_executions')::bigint AS exec_seq_scans`,
  );
  return {
    xacts: Number(rows[0].xacts),
    execIdxScans: Number(rows[0].exec_idx_scans),
    execSeqScans: Number(rows[0].exec_seq_scans),
  };
}

/** Tracks `count` contacts `<prefix><i>@waiting.example` with `event`, then waits until `count` executions of `workflowId` wait. */
async function loadWaiting(ctx, { prefix, count, event, workflowId, counts0 }) {
  const t0 = performance.now();
  const tracks = await pacedTracks(ctx, {
    total: count,
    rate: Number.POSITIVE_INFINITY,
    maxInFlight: MAX_IN_FLIGHT,
    body: (i) => ({ email: `${prefix}${i}@${DOMAIN}`, event, data: { trial: 'pro' } }),
  });
  const failed = tracks.results.filter((r) => r.status !== 200);
  if (failed.length)
    throw new Error(`${failed.length} tracks failed, e.g. ${failed[0].status} ${failed[0].error ?? ''}`);
  const trackedS = (performance.now() - t0) / 1000;
  for (;;) {
    const c = await executionCounts(ctx, workflowId);
    if (c.failed) throw new Error(`${c.failed} executions FAILED`);
    if (c.waiting - (counts0?.waiting ?? 0) >= count && c.running === 0)
      return { trackedS, waitingS: (performance.now() - t0) / 1000, counts: c };
    if (performance.now() - t0 > GIVE_UP_SECONDS * 1000)
      throw new Error(
        `after ${GIVE_UP_SECONDS} s only ${c.waiting} of ${count} executions WAITING (${JSON.stringify(c)})`,
      );
    await sleep(100, ctx.signal);
  }
}

/** A full collection in every worker process: summed RSS and heap (see lib/workflows.mjs collectGarbage). */
async function collectAll(pids) {
  const out = { rssMb: 0, heapUsedMb: 0, heapTotalMb: 0, rssMbBefore: 0 };
  for (const pid of pids) {
    const m = await collectGarbage(pid);
    for (const k of Object.keys(out)) out[k] += m[k];
  }
  return out;
}
const roundAll = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round(v)]));

/** `seconds` of sleep, the worker's RSS sampled every second (MB, one decimal). */
async function rssEverySecond(ctx, seconds) {
  const rss = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    await sleep(Math.min(1000, Math.max(0, until - performance.now())), ctx.signal);
    rss.push(workerRss(ctx).total);
  }
  return rss;
}

/** WINDOW_SECONDS without a harness query: CPU per role and the worker's RSS every second. */
async function quietWindow(ctx) {
  const d0 = await dbCounters(ctx);
  const a = processSnapshot(ctx);
  const rss = await rssEverySecond(ctx, WINDOW_SECONDS);
  const b = processSnapshot(ctx);
  const d1 = await dbCounters(ctx);
  const w = cpuWindow(a, b);
  const secs = w.seconds;
  return {
    ...w,
    workerRssMbSeries: rss.map((v) => round(v)),
    workerRssMbMax: round(Math.max(...rss)),
    workerRssMbMin: round(Math.min(...rss)),
    workerRssMbEnd: round(rss.at(-1)),
    // minus the two harness queries of dbCounters itself (one transaction each)
    dbTransactionsPerSec: round((d1.xacts - d0.xacts - 1) / secs),
    executionIndexScansPerSec: round((d1.execIdxScans - d0.execIdxScans) / secs),
    executionSeqScans: d1.execSeqScans - d0.execSeqScans,
  };
}

export default {
  name: 'workflow-waiting',
  description: `${fmt(TOTAL)} executions WAITING on a 1-hour DELAY: worker CPU and RSS while they wait`,
  // --inspect-port=0: the inspector a SIGUSR1 opens (for the forced collections) takes a free port.
  pigeonEnv: { NODE_OPTIONS: '--inspect-port=0' },
  target: [
    {
      metric: 'extraWorkerCpuPercentOfCore',
      max: 0.5,
      unit: '% core',
      digits: 2,
      label: `no CPU for waiting: worker CPU while ${fmt(TOTAL)} wait − idle with none ≤ 0.5% of a core (${WINDOW_SECONDS} s each)`,
    },
    {
      metric: 'workerRssDeltaMb',
      max: 20,
      unit: 'MB',
      digits: 1,
      label: `worker RSS while ${fmt(TOTAL)} wait − before they were loaded ≤ 20 MB (each after a full collection)`,
    },
  ],

  async setup(ctx) {
    await waitWorkflowConsumer(ctx);
    let t0 = performance.now();
    await seedContacts(ctx, { prefix: 'wait', domain: DOMAIN, count: TOTAL });
    await seedContacts(ctx, { prefix: 'warm', domain: DOMAIN, count: WARMUP });
    const seedS = (performance.now() - t0) / 1000;
    const feedS = await waitFeedDrained(ctx);
    const shape = (trigger, name) => ({
      name,
      trigger,
      steps: [
        { key: 'wait', type: 'DELAY', config: DELAY },
        { key: 'done', type: 'EXIT', config: { reason: 'trial over' } },
      ],
      transitions: [['wait', 'done']],
    });
    const tag = Date.now().toString(36);
    const wf = await buildWorkflow(ctx, shape(EVENT, `trial ${tag}`));
    const warm = await buildWorkflow(ctx, shape(WARMUP_EVENT, `warm-up ${tag}`));

    // Warm-up: the same path once for WARMUP contacts, then nothing left waiting.
    t0 = performance.now();
    await loadWaiting(ctx, { prefix: 'warm', count: WARMUP, event: WARMUP_EVENT, workflowId: warm.id });
    const { cancelled } = await ctx.json(`/workflows/${warm.id}/executions/cancel-all`, {
      method: 'POST',
      headers: ctx.auth,
    });
    if (cancelled !== WARMUP) throw new Error(`warm-up: cancelled ${cancelled} of ${WARMUP}`);
    await waitFeedDrained(ctx);
    const warmS = (performance.now() - t0) / 1000;
    const workers = processSnapshot(ctx).workers;
    if (!workers.length)
      ctx.note('Pigeon runs no worker processes (WORKER_PROCESSES=0?): the "worker" figures are empty');
    Object.assign(ctx.state, { workflowId: wf.id });
    ctx.note(
      `setup: ${fmt(TOTAL + WARMUP)} contacts seeded in ${fmt(seedS, 1)} s, change feed drained in ${fmt(feedS ?? 0, 1)} s; ` +
        `workflow ${wf.id} (${EVENT}: DELAY ${DELAY.amount} ${DELAY.unit} → EXIT); warm-up: ${fmt(WARMUP)} executions of an ` +
        `identical workflow tracked into WAITING and cancelled in ${fmt(warmS, 1)} s; worker process(es): ${workers.join(', ') || 'none'}`,
    );
  },

  async run(ctx) {
    const { workflowId } = ctx.state;
    const workers = processSnapshot(ctx).workers;
    // Every worker's inspector opened (and one collection) before anything is measured, so its
    // own memory is in both states alike.
    for (const pid of workers) await collectGarbage(pid);

    // ---- 1. idle, nothing waiting ----------------------------------------------------------------
    const idleSettle = await rssEverySecond(ctx, SETTLE_SECONDS);
    const idle = await quietWindow(ctx);
    const idleGc = await collectAll(workers);

    // ---- 2. loading ------------------------------------------------------------------------------
    const cpuLoad0 = processSnapshot(ctx);
    const loaded = await loadWaiting(ctx, { prefix: 'wait', count: TOTAL, event: EVENT, workflowId });
    const loading = cpuWindow(cpuLoad0, processSnapshot(ctx));
    const afterLoad = workerRss(ctx);
    // The tracks' changes (their events, the contacts' data) all read by the feed before the window.
    await waitFeedDrained(ctx);

    // ---- 3. waiting ------------------------------------------------------------------------------
    const waitingSettle = await rssEverySecond(ctx, SETTLE_SECONDS);
    const waiting = await quietWindow(ctx);
    const waitingGc = await collectAll(workers);

    // ---- checks ----------------------------------------------------------------------------------
    const counts = await executionCounts(ctx, workflowId);
    const { rows } = await ctx.sql(
      `SELECT extract(epoch FROM min(wake_at) - now()) AS min_s, extract(epoch FROM max(wake_at) - now()) AS max_s,
              count(*) FILTER (WHERE wake_at IS NULL)::int AS no_timer
       FROM workflow_executions WHERE workflow_id = $1 AND status = 'WAITING'`,
      [workflowId],
    );
    const timers = rows[0];
    const { rows: runs } = await ctx.sql(
      `SELECT r.status, count(*)::int AS n FROM workflow_step_runs r JOIN workflow_executions x ON x.id = r.execution_id
       WHERE x.workflow_id = $1 GROUP BY r.status`,
      [workflowId],
    );
    const problems = [];
    if (!workers.length) problems.push('Pigeon runs no worker processes (WORKER_PROCESSES=0?): nothing to measure');
    if (counts.waiting !== TOTAL || counts.total !== TOTAL)
      problems.push(`executions: ${JSON.stringify(counts)}, expected ${TOTAL} WAITING`);
    if (timers.no_timer) problems.push(`${timers.no_timer} WAITING executions without wake_at`);
    if (Number(timers.min_s) < 3000)
      problems.push(`a timer is due in ${Math.round(Number(timers.min_s))} s, not about an hour`);
    const workersAtEnd = processSnapshot(ctx).workers;
    if (workersAtEnd.join(',') !== workers.join(','))
      problems.push(
        `the worker processes changed during the run (${workers.join(', ')} → ${workersAtEnd.join(', ')}): restarted?`,
      );

    // What the waiting costs: RSS and V8 heap after a full collection, waiting − idle.
    const rssDelta = waitingGc.rssMb - idleGc.rssMb;
    const heapDelta = waitingGc.heapUsedMb - idleGc.heapUsedMb;
    // Without forcing anything: RSS at the end of each window (V8 collects when it likes).
    const rssDeltaUncollected = waiting.workerRssMbEnd - idle.workerRssMbEnd;
    const extraCpu = waiting.workerCpuPercentOfCore - idle.workerCpuPercentOfCore;
    const sign = (v, d = 1) => `${v >= 0 ? '+' : ''}${fmt(v, d)}`;
    const showCpu = (w) =>
      `worker ${fmt(w.workerCpuPercentOfCore, 2)}% (${fmt(w.workerCpuSeconds, 2)} CPU s), API process ${fmt(w.mainCpuPercentOfCore, 2)}%, ` +
      `PostgreSQL ${fmt(w.dbCpuPercentOfCore, 2)}% of a core; ${fmt(w.dbTransactionsPerSec, 1)} transactions/s, ` +
      `${fmt(w.executionIndexScansPerSec, 1)} index scans of workflow_executions/s, ${fmt(w.executionSeqScans)} sequential; ` +
      `other processes ${fmt(w.otherCpuPercentOfCore, 1)}%`;
    ctx.note(
      `idle, nothing waiting (${fmt(idle.seconds, 1)} s, from ${SETTLE_SECONDS} s after the warm-up): ${showCpu(idle)}`,
    );
    ctx.note(
      `loading: ${fmt(TOTAL)} tracks answered in ${fmt(loaded.trackedS, 1)} s (${fmt(TOTAL / loaded.trackedS)}/s), all ` +
        `${fmt(TOTAL)} WAITING after ${fmt(loaded.waitingS, 1)} s (${fmt(TOTAL / loaded.waitingS)} executions/s); CPU meanwhile: ` +
        `worker ${fmt(loading.workerCpuPercentOfCore)}%, API ${fmt(loading.mainCpuPercentOfCore)}%, PostgreSQL ${fmt(loading.dbCpuPercentOfCore)}%`,
    );
    ctx.note(
      `${fmt(TOTAL)} waiting (${fmt(waiting.seconds, 1)} s, from ${SETTLE_SECONDS} s after the last one was WAITING): ${showCpu(waiting)} ` +
        `→ ${sign(extraCpu, 2)}% of a core for the worker`,
    );
    ctx.note(
      `worker memory after a full collection (HeapProfiler.collectGarbage through the worker's inspector, opened with SIGUSR1 ` +
        `before the first window): idle RSS ${fmt(idleGc.rssMb, 1)} MB, V8 heap used ${fmt(idleGc.heapUsedMb, 1)} MB; ` +
        `${fmt(TOTAL)} waiting RSS ${fmt(waitingGc.rssMb, 1)} MB, heap used ${fmt(waitingGc.heapUsedMb, 1)} MB → RSS ` +
        `${sign(rssDelta)} MB, heap ${sign(heapDelta)} MB`,
    );
    ctx.note(
      `worker RSS as V8 left it (no forced collection): ${fmt(idle.workerRssMbEnd, 1)} MB at the end of the idle window, ` +
        `${fmt(afterLoad.total, 1)} MB right after loading, ${fmt(waiting.workerRssMbEnd, 1)} MB at the end of the waiting ` +
        `window (${fmt(waiting.workerRssMbMin, 1)}–${fmt(waiting.workerRssMbMax, 1)} during it) → ${sign(rssDeltaUncollected)} MB; ` +
        `this swings by tens of MB with when V8 happens to collect (the loading burst's garbage); ` +
        `API process ${fmt(afterLoad.main, 1)} MB after loading`,
    );
    const line = (xs) => xs.map((v) => round(v).toFixed(1).padStart(6)).join('');
    ctx.attach(
      `worker RSS MB once a second, no forced collection: ${SETTLE_SECONDS} s settling, then the ${WINDOW_SECONDS} s window`,
      [
        `idle, settling after the warm-up:  ${line(idleSettle)}`,
        `idle window:                       ${line(idle.workerRssMbSeries)}`,
        `waiting, settling after loading:   ${line(waitingSettle)}`,
        `waiting window:                    ${line(waiting.workerRssMbSeries)}`,
      ].join('\n'),
    );
    ctx.note(
      `check: ${fmt(counts.waiting)} WAITING, timers due in ${fmt(Number(timers.min_s) / 60, 1)}–${fmt(Number(timers.max_s) / 60, 1)} min; ` +
        `step records ${runs.map((r) => `${r.status} ${fmt(r.n)}`).join(', ')}`,
    );
    return {
      waitingWorkerCpuPercentOfCore: waiting.workerCpuPercentOfCore,
      idleWorkerCpuPercentOfCore: idle.workerCpuPercentOfCore,
      extraWorkerCpuPercentOfCore: round(extraCpu, 2),
      waitingDbCpuPercentOfCore: waiting.dbCpuPercentOfCore,
      idleDbCpuPercentOfCore: idle.dbCpuPercentOfCore,
      workerRssDeltaMb: round(rssDelta),
      workerHeapDeltaMb: round(heapDelta),
      workerIdleAfterGc: roundAll(idleGc),
      workerWaitingAfterGc: roundAll(waitingGc),
      workerRssDeltaUncollectedMb: round(rssDeltaUncollected),
      workerRssMbAfterLoading: round(afterLoad.total),
      loadingSeconds: round(loaded.waitingS, 2),
      idle,
      loading,
      waiting,
      workerProcesses: workers.length,
      executions: counts,
      problem: problems.length ? problems.join('; ') : undefined,
      summary:
        `${fmt(TOTAL)} WAITING: worker ${fmt(waiting.workerCpuPercentOfCore, 2)}% of a core (idle with none: ` +
        `${fmt(idle.workerCpuPercentOfCore, 2)}%), PostgreSQL ${fmt(waiting.dbCpuPercentOfCore, 2)}% (${fmt(idle.dbCpuPercentOfCore, 2)}%); ` +
        `worker after a full GC: RSS ${fmt(idleGc.rssMb)} → ${fmt(waitingGc.rssMb)} MB (${sign(rssDelta)}), heap ` +
        `${fmt(idleGc.heapUsedMb, 1)} → ${fmt(waitingGc.heapUsedMb, 1)} MB; loaded in ${fmt(loaded.waitingS, 1)} s`,
    };
  },

  async diagnose(ctx) {
    // The runner's claim with the executions waiting: the partial index on wake_at must find
    // nothing due without visiting the waiting rows.
    await ctx.sql('BEGIN');
    try {
      const { rows } = await ctx.sql(`EXPLAIN (ANALYZE, BUFFERS) ${CLAIM_SQL}`);
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      ctx.attach(
        `EXPLAIN (ANALYZE, BUFFERS) of the runner's claim (runner.ts runOne) with ${fmt(TOTAL)} waiting`,
        plan,
      );
      ctx.note(`claim query with ${fmt(TOTAL)} waiting: ${/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? '?'} ms`);
    } finally {
      await ctx.sql('ROLLBACK');
    }
  },
};
