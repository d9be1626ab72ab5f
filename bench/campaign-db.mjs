#!/usr/bin/env node
// Where the database time of a delivered campaign message goes (issue 26, part 4): one Pigeon with
// its worker processes on an embedded PostgreSQL with pg_stat_statements loaded (track all, with
// planning), the harness's SMTP sink, COUNT seeded contacts and one campaign to all of them. From
// the send call until the last message is at the sink:
//   - CPU per message of PostgreSQL's backends, of its other processes, of the workers, of the API;
//   - pg_stat_statements per statement, per message: calls, executions' and planning's ms, rows,
//     shared blocks, and how many calls were planned (plans = calls: a custom plan every time);
//   - the same summed over every statement, against PostgreSQL's CPU;
//   - autovacuum and autoanalyze runs during the campaign, and how often another session held a
//     snapshot 100+ transactions old (dead queue-index entries behind it cannot be marked dead).
//
//   node bench/campaign-db.mjs [--count 20000] [--top 25] [--probe-claim] [--probe-claim-scan] [--pigeon-env K=V ...]
//                              [--sql STATEMENT ...] [--pg-set NAME=VALUE ...]
//
// --pg-set: a PostgreSQL setting (ALTER SYSTEM, before the restart that loads pg_stat_statements,
// so settings that need a restart apply too), e.g. --pg-set shared_buffers=1GB.
//
// --sql: run after start-up, before the seed (a schema experiment, e.g. an index dropped), in order.
//
// --probe-claim-scan: the claim's scan for 10 due rows (with and without its row locks) at 25%, 50% and
// 75% of the campaign: rows, the scan used, shared buffers, time (lib/claim-probe.mjs).
//
// --probe-claim: also what the claim's update of an `emails` row costs with and without its status
// change, measured once a quarter of the campaign is out (lib/claim-probe.mjs).
//
// Prints a markdown report. Needs `pnpm build` first. Stops everything it started.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CAMPAIGN_HTML, CAMPAIGN_SUBJECT } from './lib/campaigns.mjs';
import { prepareClaimProbe, probeClaim, probeClaimScan, probeWholeClaim } from './lib/claim-probe.mjs';
import { connectDb, envFromPairs, pigeonEnvironment, readFirstRun, stopLeftoverPostgres } from './lib/pigeon.mjs';
import { cpuSeconds, descendantsCpuByProgram, freePort, startNode, supervisedApiPid } from './lib/process.mjs';
import { SENDER, SENDER_DOMAIN, smtpSinkClient } from './lib/sending.mjs';
import { nodeDescendants } from './lib/workflows.mjs';

const { values: args } = parseArgs({
  options: {
    count: { type: 'string', default: '20000' },
    top: { type: 'string', default: '25' },
    'probe-claim': { type: 'boolean', default: false },
    'probe-claim-scan': { type: 'boolean', default: false },
    'pigeon-env': { type: 'string', multiple: true, default: [] },
    sql: { type: 'string', multiple: true, default: [] },
    'pg-set': { type: 'string', multiple: true, default: [] },
  },
});
const COUNT = Number(args.count);

/** Autovacuum and autoanalyze runs so far, per table (partitions included). */
async function maintenanceCounts(db) {
  const { rows } = await db.query(
    'SELECT relname, autovacuum_count::int AS vacuums, autoanalyze_count::int AS analyzes FROM pg_stat_user_tables',
  );
  return new Map(rows.map((r) => [r.relname, r]));
}

/**
 * The oldest snapshot another session holds (transactions since its xmin): while one is held, the
 * queue index's entries for mail claimed since cannot be marked dead, and every claim walks them.
 */
async function sampleHorizon(db, horizon) {
  const { rows } = await db.query(
    `SELECT backend_type, state, age(backend_xmin)::int AS age, left(regexp_replace(query, '\\s+', ' ', 'g'), 60) AS query
     FROM pg_stat_activity WHERE backend_xmin IS NOT NULL AND pid <> pg_backend_pid() ORDER BY age(backend_xmin) DESC LIMIT 1`,
  );
  horizon.samples++;
  const row = rows[0];
  if (!row || row.age < 100) return;
  horizon.held++;
  if (!horizon.oldest || row.age > horizon.oldest.age) horizon.oldest = row;
}

/** WAL written, full-page images, checkpoints and buffer traffic so far (PostgreSQL 17+ views). */
async function walCounters(db) {
  const { rows } = await db.query(
    `SELECT w.wal_bytes::float8 AS wal_bytes, w.wal_fpi::float8 AS fpi, w.wal_records::float8 AS records,
            w.wal_buffers_full::float8 AS wal_buffers_full,
            (c.num_timed + c.num_requested)::float8 AS checkpoints, c.num_requested::float8 AS requested,
            (SELECT sum(reads)::float8 FROM pg_stat_io) AS reads, (SELECT sum(evictions)::float8 FROM pg_stat_io) AS evictions
     FROM pg_stat_wal w, pg_stat_checkpointer c`,
  );
  return rows[0];
}

function walLine(before, after, count) {
  const d = (k) => after[k] - before[k];
  const per = (k, digits = 2) => (d(k) / count).toFixed(digits);
  return (
    `WAL per message: ${Math.round(d('wal_bytes') / count)} bytes, ${per('records')} records, ${per('fpi', 3)} full-page images; ` +
    `WAL buffers full ${d('wal_buffers_full')} times; ${d('checkpoints')} checkpoint(s) began (${d('requested')} requested by WAL volume); ` +
    `buffer reads ${per('reads', 3)} and evictions ${per('evictions', 3)} per message.`
  );
}

function maintenanceLines(before, after, horizon) {
  const runs = [...after.values()].flatMap((a) => {
    const b = before.get(a.relname) ?? { vacuums: 0, analyzes: 0 };
    const v = a.vacuums - b.vacuums;
    const n = a.analyzes - b.analyzes;
    return v || n
      ? [`${a.relname} (${v ? `autovacuum ${v}` : ''}${v && n ? ', ' : ''}${n ? `autoanalyze ${n}` : ''})`]
      : [];
  });
  const oldest = horizon.oldest;
  return [
    `During the campaign: ${runs.length ? runs.join(', ') : 'no autovacuum or autoanalyze'}; another session's snapshot ` +
      `was 100+ transactions old in ${horizon.held} of ${horizon.samples} samples (every 250 ms)` +
      (oldest
        ? `, the oldest ${oldest.age} transactions (${oldest.backend_type}, ${oldest.state}: \`${oldest.query}\`)`
        : '') +
      '.',
  ];
}
const BENCH = new URL('.', import.meta.url).pathname;
const CLI = join(BENCH, '..', 'packages', 'server', 'dist', 'cli.js');

const dataDir = mkdtempSync(join(os.tmpdir(), 'pigeon-campaigndb-'));
chmodSync(dataDir, 0o711);
const started = [];
const lines = [];
const out = (s = '') => {
  lines.push(s);
  console.log(s);
};
let db;
let probeDb;
try {
  const sinkHandle = startNode({
    name: 'smtp-sink',
    args: [join(BENCH, 'services', 'smtp-sink.mjs')],
    env: { ...process.env },
    ready: /listening on http:\/\/\S+ smtp:\/\/\S+/,
  });
  started.push(sinkHandle);
  await sinkHandle.ready;
  const sink = smtpSinkClient(sinkHandle);
  const [port, pgPort] = [await freePort(), await freePort()];
  const env = pigeonEnvironment({
    port,
    pgPort,
    dataDir,
    rateLimitPerMinute: 1_000_000_000,
    extra: {
      SMTP_URL: sink.url,
      ...envFromPairs(args['pigeon-env']),
    },
  });
  const startPigeon = async () => {
    const h = startNode({ name: 'Pigeon', args: [CLI, 'start'], env, ready: /Pigeon is listening on/ });
    started.push(h);
    await h.ready;
    h.pid = supervisedApiPid(h.pid);
    return h;
  };
  // pg_stat_statements needs shared_preload_libraries: set on the first start, then a restart.
  let pigeon = await startPigeon();
  db = await connectDb({ dataDir, port: pgPort });
  await db.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
  await db.query(`ALTER SYSTEM SET pg_stat_statements.track = 'all'`);
  await db.query(`ALTER SYSTEM SET pg_stat_statements.track_planning = on`);
  for (const [name, value] of Object.entries(envFromPairs(args['pg-set']))) {
    await db.query(`ALTER SYSTEM SET ${name} = '${value.replace(/'/g, "''")}'`);
    out(`- PostgreSQL setting: \`${name} = ${value}\``);
  }
  await db.close();
  await pigeon.stop();
  started.pop();
  await stopLeftoverPostgres(dataDir);
  pigeon = await startPigeon();
  db = await connectDb({ dataDir, port: pgPort });
  await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  for (const statement of args.sql) {
    await db.query(statement);
    out(`- applied: \`${statement}\``);
  }
  const { secretKey, projectId } = readFirstRun(dataDir);
  const baseUrl = `http://127.0.0.1:${port}`;
  const api = async (path, body) => {
    const res = await fetch(baseUrl + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok && res.status !== 409) throw new Error(`POST ${path} → ${res.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
  await api('/domains', { domain: SENDER_DOMAIN });
  await db.query('UPDATE domains SET verified_at = now() WHERE project_id = $1 AND domain = $2', [
    projectId,
    SENDER_DOMAIN,
  ]);
  await db.query(
    `INSERT INTO contacts (id, project_id, email, subscribed, data, created_at, updated_at)
     SELECT uuidv7_compat(), $1::uuid, 'c' || i || '@campaign.example', true, jsonb_build_object('firstName', 'N' || i), now(), now()
     FROM generate_series(1, $2::int) i`,
    [projectId, COUNT],
  );
  await db.query('VACUUM ANALYZE');
  // The seed's change-feed rows are read before anything is measured.
  for (;;) {
    const { rows } = await db.query(
      `SELECT EXISTS (SELECT 1 FROM change_feed_cursors cur
         JOIN contact_changes ch ON ch.part = cur.part AND (ch.txid, ch.seq) > (cur.txid, cur.seq)) AS pending`,
    );
    if (!rows[0].pending) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const campaign = await api('/campaigns', {
    name: 'where the time goes',
    subject: CAMPAIGN_SUBJECT,
    body: CAMPAIGN_HTML,
    from: SENDER,
    audienceType: 'ALL',
  });
  let probeLines;
  if (args['probe-claim']) await prepareClaimProbe(db);
  if (args['probe-claim'] || args['probe-claim-scan']) probeDb = await connectDb({ dataDir, port: pgPort });
  const scanLines = [];
  const scanAt = args['probe-claim-scan'] ? [0.25, 0.5, 0.75] : [];
  await sink.reset();
  await db.query('SELECT pg_stat_statements_reset()');
  const workers = nodeDescendants(pigeon.pid);
  const cpu = () => ({
    split: descendantsCpuByProgram(pigeon.pid),
    api: cpuSeconds(pigeon.pid),
    workers: workers.reduce((n, pid) => n + cpuSeconds(pid), 0),
  });
  const before = cpu();
  const maintenanceBefore = await maintenanceCounts(db);
  const walBefore = await walCounters(db);
  const horizon = { samples: 0, held: 0, oldest: null };
  const t0 = performance.now();
  await api(`/campaigns/${campaign.data.id}/send`, {});
  for (;;) {
    const { count } = await sink.stats();
    if (count >= COUNT) break;
    await sampleHorizon(db, horizon);
    if (args['probe-claim'] && !probeLines && count >= COUNT / 4) probeLines = await probeClaim(probeDb);
    while (scanAt.length && count >= COUNT * scanAt[0]) {
      const when = `${Math.round((scanAt.shift() ?? 0) * 100)}% out`;
      scanLines.push(...(await probeClaimScan(probeDb, when)), ...(await probeWholeClaim(probeDb, when)));
    }
    if (performance.now() - t0 > 30 * 60_000) throw new Error(`only ${count} of ${COUNT} at the sink after 30 min`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const seconds = (performance.now() - t0) / 1000;
  const after = cpu();
  const walAfter = await walCounters(db);
  const per = (v) => ((v * 1000) / COUNT).toFixed(3);
  out(`# Where the database time of a campaign message goes (${new Date().toISOString()})`);
  out('');
  out(
    `${COUNT.toLocaleString('en')} messages in ${seconds.toFixed(1)} s (${Math.round(COUNT / seconds)} msg/s), ` +
      `${workers.length} worker process(es). CPU per message: PostgreSQL backends ${per(after.split.backends - before.split.backends)} ms, ` +
      `its other processes ${per(after.split.postgresOther - before.split.postgresOther)} ms, workers ${per(after.workers - before.workers)} ms, ` +
      `API ${per(after.api - before.api)} ms.`,
  );
  out('');
  const { rows: totals } = await db.query(
    `SELECT sum(calls)::bigint AS calls, sum(total_exec_time) AS exec, sum(total_plan_time) AS plan
     FROM pg_stat_statements WHERE toplevel`,
  );
  out(
    `pg_stat_statements, top-level statements: ${(Number(totals[0].calls) / COUNT).toFixed(1)} calls, ` +
      `${per(Number(totals[0].exec) / 1000)} ms executing and ${per(Number(totals[0].plan) / 1000)} ms planning per message ` +
      '(times include waits: lock waits, I/O).',
  );
  out('');
  const { rows } = await db.query(
    `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query, toplevel, calls, plans, rows,
            total_exec_time AS exec, total_plan_time AS plan, shared_blks_hit AS hit, shared_blks_dirtied AS dirtied
     FROM pg_stat_statements ORDER BY total_exec_time + total_plan_time DESC LIMIT $1`,
    [Number(args.top)],
  );
  out(
    'PostgreSQL 18 keys pg_stat_statements by relation alias, so every foreign-key check (`SELECT 1 FROM ONLY <table> x ' +
      '… FOR KEY SHARE OF x`) is one row below, shown with the text of whichever table came first.',
  );
  out('');
  out(
    '| statement | top | calls/msg | plans/call | exec ms/msg | plan ms/msg | rows/call | blks hit/call | dirtied/call |',
  );
  out('|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const s of rows) {
    const calls = Number(s.calls);
    out(
      `| \`${s.query.replace(/\|/g, '\\|')}\` | ${s.toplevel ? 'y' : 'n'} | ${(calls / COUNT).toFixed(3)} | ` +
        `${(Number(s.plans) / calls).toFixed(2)} | ${per(s.exec / 1000)} | ${per(s.plan / 1000)} | ` +
        `${(Number(s.rows) / calls).toFixed(1)} | ${(Number(s.hit) / calls).toFixed(1)} | ${(Number(s.dirtied) / calls).toFixed(2)} |`,
    );
  }
  out('');
  out(...maintenanceLines(maintenanceBefore, await maintenanceCounts(db), horizon));
  out('');
  out(walLine(walBefore, walAfter, COUNT));
  if (scanLines.length) {
    out('');
    out("The claim's scan for 10 due rows, mid-campaign (`--probe-claim-scan`, rolled back):");
    out('');
    out('| when | how | rows | scan | shared buffers | execution ms |');
    out('|---|---|---:|---|---:|---:|');
    for (const line of scanLines) out(line);
  }
  if (probeLines) {
    out('');
    out("The claim's update, measured once a quarter of the campaign was out (`--probe-claim`, rolled back):");
    out('');
    for (const line of probeLines) out(line);
  }
} finally {
  await probeDb?.close();
  await db?.close();
  for (const h of started.reverse()) await h.stop();
  await stopLeftoverPostgres(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
}
