import { freePort } from '../lib/process.mjs';
import { sleep } from '../lib/sending.mjs';

/**
 * What a Prometheus scrape of METRICS_PORT costs: `pigeon start` (API + its worker process, the
 * workers' metrics asked over IPC at each scrape) with the embedded PostgreSQL, on a Pigeon of its
 * own. CPU of every Pigeon process and of PostgreSQL (/proc utime + stime), over:
 *   1. IDLE_SECONDS with no scrape (what Pigeon costs anyway: feed polls, heartbeats, timers);
 *   2. SCRAPES scrapes one after another; CPU per scrape = (CPU − idle rate × duration) ÷ SCRAPES;
 * first with an empty database, then with QUEUED emails waiting (seeded in SQL, due tomorrow so the
 * workers leave them alone: the queue count is the scrape's biggest query).
 * At Prometheus' default 15 s interval, one scrape per 15 s costs (CPU per scrape ÷ 15 s) of a core.
 */
const IDLE_SECONDS = 20;
const SCRAPES = 200;
const QUEUED = 100_000;
const INTERVAL_SECONDS = 15;

const fmt = (v, d = 0) => v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
const total = (c) => c.pigeon + c.db; // the API process + its descendants (workers, PostgreSQL)

async function measure(ctx, url) {
  const idle0 = ctx.cpu();
  await sleep(IDLE_SECONDS * 1000, ctx.signal);
  const idle1 = ctx.cpu();
  const idleRate = (total(idle1) - total(idle0)) / ((idle1.at - idle0.at) / 1000);
  let bytes = 0;
  const s0 = ctx.cpu();
  for (let i = 0; i < SCRAPES; i++) {
    const res = await fetch(url, { signal: ctx.signal });
    if (!res.ok) throw new Error(`GET /metrics → ${res.status}`);
    bytes = (await res.text()).length;
  }
  const s1 = ctx.cpu();
  const seconds = (s1.at - s0.at) / 1000;
  const cpuPerScrape = Math.max(0, total(s1) - total(s0) - idleRate * seconds) / SCRAPES;
  return {
    msPerScrape: (seconds / SCRAPES) * 1000,
    cpuMsPerScrape: cpuPerScrape * 1000,
    percentOfCoreAt15s: (cpuPerScrape / INTERVAL_SECONDS) * 100,
    idlePercentOfCore: idleRate * 100,
    bytes,
  };
}

export default {
  name: 'metrics-scrape',
  description: `CPU of a /metrics scrape (API + worker over IPC + database numbers), empty and with ${fmt(QUEUED)} emails queued`,
  pigeonEnv: async () => ({ METRICS_PORT: await freePort(), WORKER_PROCESSES: 1 }),
  target: {
    metric: 'percentOfCoreAt15s',
    max: 1,
    unit: '% core',
    digits: 3,
    label: `a scrape every ${INTERVAL_SECONDS} s costs < 1% of a core (${fmt(QUEUED)} emails queued)`,
  },
  async run(ctx) {
    const url = `http://127.0.0.1:${ctx.pigeonEnv.METRICS_PORT}/metrics`;
    // Warm up: the first scrapes plan the queries and load the metrics code.
    for (let i = 0; i < 10; i++) await (await fetch(url)).text();
    const empty = await measure(ctx, url);
    const { rows } = await ctx.sql('SELECT id FROM projects LIMIT 1');
    await ctx.sql(
      `INSERT INTO emails (id, project_id, content_type, priority, from_email, to_email, subject, html, text, message_id, next_attempt_at)
       SELECT gen_random_uuid(), $1, 'MARKETING', i % 3, 'a@bench.example', 'r' || i || '@bench.example', 's', '', '', '<' || i || '@bench.example>',
              now() + interval '1 day'
       FROM generate_series(1, $2) AS i`,
      [rows[0].id, QUEUED],
    );
    await ctx.sql('ANALYZE emails');
    for (let i = 0; i < 10; i++) await (await fetch(url)).text();
    const queued = await measure(ctx, url);
    const show = (m) =>
      `${fmt(m.cpuMsPerScrape, 2)} ms CPU per scrape (Pigeon + workers + PostgreSQL), ${fmt(m.msPerScrape, 1)} ms wall, ` +
      `${fmt(m.bytes)} bytes → ${fmt(m.percentOfCoreAt15s, 3)}% of a core at one scrape per ${INTERVAL_SECONDS} s ` +
      `(idle Pigeon meanwhile: ${fmt(m.idlePercentOfCore, 2)}% of a core)`;
    ctx.note(`empty database: ${show(empty)}`);
    ctx.note(`${fmt(QUEUED)} emails queued: ${show(queued)}`);
    return { ...queued, empty };
  },
};
