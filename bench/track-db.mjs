#!/usr/bin/env node
// Where the database time of a track goes (issue 30): one Pigeon on an embedded PostgreSQL with
// pg_stat_statements loaded, then the `track` scenario's requests at 50 connections against Pigeon,
// bare-track and bare-minimal-track in turn (the same database), and per target:
//   - pg_stat_statements per statement: calls, mean ms, shared blocks hit/read/dirtied/written and
//     WAL records/bytes per call;
//   - what active backends were waiting on (pg_stat_activity sampled every 50 ms) and the locks
//     they waited for (pg_locks, not granted);
//   - CPU µs per request of the server process and of PostgreSQL;
// then EXPLAIN (ANALYZE, BUFFERS) of Pigeon's track statement and of the minimal one (auto_explain
// in one session, its LOG sent to the client), for a new and for a known contact.
//
//   node bench/track-db.mjs [--duration 10] [--connections 50] [--rounds 1] [--pigeon-env K=V ...]
//
// Prints a markdown report. Needs `pnpm build` first. Stops everything it started.
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { connectDb, envFromPairs, pigeonEnvironment, readFirstRun, stopLeftoverPostgres } from './lib/pigeon.mjs';
import { cpuSeconds, descendantsCpuSeconds, freePort, startNode, supervisedApiPid } from './lib/process.mjs';
import { trackBodies } from './scenarios/track.mjs';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '1' },
    'pigeon-env': { type: 'string', multiple: true, default: [] },
  },
});
const duration = Number(args.duration);
const connections = Number(args.connections);
const BENCH = new URL('.', import.meta.url).pathname;
const CLI = join(BENCH, '..', 'packages', 'server', 'dist', 'cli.js');

const dataDir = mkdtempSync(join(os.tmpdir(), 'pigeon-trackdb-'));
chmodSync(dataDir, 0o711);
const [port, pgPort] = [await freePort(), await freePort()];
const env = pigeonEnvironment({
  port,
  pgPort,
  dataDir,
  rateLimitPerMinute: 1_000_000_000,
  extra: envFromPairs(args['pigeon-env']),
});
const started = [];
const start = (name, script, extra = {}, ready = /listening on/) => {
  const h = startNode({
    name,
    args: [script, ...(name === 'Pigeon' ? ['start'] : [])],
    env: { ...env, ...extra },
    ready,
  });
  started.push(h);
  return h.ready.then((ready) => {
    if (name === 'Pigeon') ready.pid = supervisedApiPid(ready.pid);
    return ready;
  });
};
let db;
const lines = [];
const out = (s = '') => {
  lines.push(s);
  console.log(s);
};

try {
  // First start initialises the database; pg_stat_statements needs shared_preload_libraries (restart).
  let pigeon = await start('Pigeon', CLI, {}, /Pigeon is listening on/);
  db = await connectDb({ dataDir, port: pgPort });
  await db.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
  await db.query(`ALTER SYSTEM SET pg_stat_statements.track = 'all'`);
  await db.close();
  await pigeon.stop();
  started.length = 0;
  await stopLeftoverPostgres(dataDir);
  pigeon = await start('Pigeon', CLI, {}, /Pigeon is listening on/);
  db = await connectDb({ dataDir, port: pgPort });
  await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const { publicKey } = readFirstRun(dataDir);
  const { embeddedPostgresPassword: password } = JSON.parse(
    (await import('node:fs')).readFileSync(join(dataDir, 'secrets.json'), 'utf8'),
  );
  const baselinePg = JSON.stringify({ host: '127.0.0.1', port: pgPort, user: 'pigeon', password, database: 'pigeon' });
  const baseUrl = `http://127.0.0.1:${port}`;
  const targets = [
    { name: 'Pigeon', url: baseUrl, handle: pigeon },
    { name: 'Pigeon, keyed', url: baseUrl, handle: pigeon, keyed: true },
  ];
  for (const name of ['bare-track', 'bare-minimal-track']) {
    const h = await start(name, join(BENCH, 'baselines', `${name}.mjs`), { PORT: '0', BASELINE_PG: baselinePg });
    targets.push({ name, url: /listening on (http:\/\/\S+)/.exec(h.output())[1], handle: h });
  }
  for (const t of targets.filter((t) => !t.keyed)) {
    const res = await fetch(`${t.url}/v1/track`, {
      method: 'POST',
      headers: { authorization: `Bearer ${publicKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: `probe-${t.name}@track.example`, event: 'probe', data: { a: 1 } }),
    });
    if (res.status !== 200) throw new Error(`${t.name} answered ${res.status}: ${await res.text()}`);
  }
  const tag = randomBytes(4).toString('hex');
  const body = trackBodies(tag);

  const load = (url, seconds, keyed = false) =>
    new Promise((resolve, reject) =>
      autocannon(
        {
          url: `${url}/v1/track`,
          connections,
          duration: seconds,
          requests: [
            {
              method: 'POST',
              headers: { authorization: `Bearer ${publicKey}`, 'content-type': 'application/json' },
              setupRequest: (req) => ({
                ...req,
                body: body(),
                ...(keyed && { headers: { ...req.headers, 'idempotency-key': randomUUID() } }),
              }),
            },
          ],
        },
        (err, r) => (err ? reject(err) : resolve(r)),
      ),
    );
  // The 10,000 known contacts exist before anything is measured, for every target alike.
  await db.query(
    `INSERT INTO contacts (id, project_id, email, subscribed) SELECT gen_random_uuid(), p.id, 'known-' || i || '@track.example'
     , true FROM projects p, generate_series(0, 9999) i ON CONFLICT DO NOTHING`,
  );
  await db.query('VACUUM ANALYZE contacts');
  for (let round = 0; round < Number(args.rounds); round++) {
    for (const t of targets) {
      await load(t.url, 2, t.keyed);
      await db.query('SELECT pg_stat_statements_reset()');
      await db.query(`SELECT pg_stat_reset_shared('wal')`);
      const waits = new Map();
      const lockWaits = new Map();
      let samples = 0;
      let active = 0;
      let sampling = true;
      const sampler = (async () => {
        const me = (await db.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
        while (sampling) {
          const { rows } = await db.query(
            `SELECT a.state, coalesce(a.wait_event_type || ':' || a.wait_event, 'CPU') AS wait,
                    (SELECT string_agg(DISTINCT l.locktype || coalesce(':' || l.relation::regclass::text, '') || ' ' || l.mode, ', ')
                       FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted) AS waiting_for
             FROM pg_stat_activity a WHERE a.backend_type = 'client backend' AND a.pid <> $1 AND a.state = 'active'`,
            [me],
          );
          samples++;
          for (const r of rows) {
            active++;
            waits.set(r.wait, (waits.get(r.wait) ?? 0) + 1);
            if (r.waiting_for) lockWaits.set(r.waiting_for, (lockWaits.get(r.waiting_for) ?? 0) + 1);
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      const cpu0 = cpuSeconds(t.handle.pid);
      const db0 = descendantsCpuSeconds(pigeon.pid);
      const client0 = process.cpuUsage();
      const r = await load(t.url, duration, t.keyed);
      const client = process.cpuUsage(client0);
      const cpu = cpuSeconds(t.handle.pid) - cpu0;
      const dbCpu = descendantsCpuSeconds(pigeon.pid) - db0;
      sampling = false;
      await sampler;
      const total = r.requests.total;
      out(`## ${t.name} (round ${round + 1})`);
      out('');
      out(
        `${Math.round(r.requests.average)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}; ` +
          `server CPU ${Math.round((cpu / total) * 1e6)} µs/req, PostgreSQL CPU ${Math.round((dbCpu / total) * 1e6)} µs/req ` +
          `(includes the sampler's queries), load generator CPU ${Math.round((client.user + client.system) / total)} µs/req; ` +
          `active backends on average ${(active / samples).toFixed(1)}`,
      );
      out('');
      const stmts = await db.query(
        `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS query, calls, rows,
                round(mean_exec_time::numeric, 3) AS mean_ms, round(total_exec_time::numeric) AS total_ms,
                round(shared_blks_hit::numeric / calls, 1) AS hit, round(shared_blks_read::numeric / calls, 2) AS read,
                round(shared_blks_dirtied::numeric / calls, 2) AS dirtied, round(shared_blks_written::numeric / calls, 2) AS written,
                round(wal_records::numeric / calls, 1) AS wal_rec, round(wal_bytes::numeric / calls) AS wal_bytes, toplevel
         FROM pg_stat_statements WHERE calls > 20 AND query NOT LIKE '%pg_stat_activity%'
         ORDER BY total_exec_time DESC LIMIT 12`,
      );
      out(
        '| statement | top | calls | rows | mean ms | total ms | blks hit/call | read | dirtied | written | WAL rec/call | WAL B/call |',
      );
      out('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
      for (const s of stmts.rows)
        out(
          `| \`${s.query.replace(/\|/g, '\\|')}\` | ${s.toplevel ? 'y' : 'n'} | ${s.calls} | ${s.rows} | ${s.mean_ms} | ${s.total_ms} | ${s.hit} | ${s.read} | ${s.dirtied} | ${s.written} | ${s.wal_rec} | ${s.wal_bytes} |`,
        );
      const wal = (await db.query('SELECT wal_records, wal_fpi, wal_bytes FROM pg_stat_wal')).rows[0];
      out('');
      out(
        `WAL per request: ${(Number(wal.wal_records) / total).toFixed(1)} records, ${(Number(wal.wal_fpi) / total).toFixed(2)} full-page images, ${Math.round(Number(wal.wal_bytes) / total)} bytes`,
      );
      out('');
      out(
        `Active backends by wait (share of ${active} samples): ${[...waits.entries()]
          .sort((a, b) => b[1] - a[1])
          .map(([w, c]) => `${w} ${((c / active) * 100).toFixed(0)}%`)
          .join(', ')}`,
      );
      if (lockWaits.size)
        out(
          `Not granted locks: ${[...lockWaits.entries()]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 6)
            .map(([w, c]) => `${w} × ${c}`)
            .join('; ')}`,
        );
      out('');
    }
  }

  // EXPLAIN (ANALYZE, BUFFERS) of both statements, through auto_explain in one session.
  const { default: pgLib } = await import(
    (await import('node:module')).createRequire(join(BENCH, '..', 'packages', 'server', 'package.json')).resolve('pg')
  );
  const client = new pgLib.Client(JSON.parse(baselinePg));
  await client.connect();
  const plans = [];
  client.on('notice', (m) => {
    if (/duration:/.test(m.message)) plans.push(m.message);
  });
  for (const q of [
    `LOAD 'auto_explain'`,
    'SET auto_explain.log_min_duration = 0',
    'SET auto_explain.log_analyze = on',
    'SET auto_explain.log_buffers = on',
    'SET auto_explain.log_wal = on',
    'SET auto_explain.log_triggers = on',
    'SET auto_explain.log_nested_statements = on',
    'SET client_min_messages = log',
  ])
    await client.query(q);
  const { trackWithKey, hashKey } = await import('../packages/server/dist/bench.js');
  const key = { keyType: 'public', keyHash: hashKey(publicKey) };
  for (const email of [`explain-new-${tag}@track.example`, 'known-42@track.example']) {
    plans.length = 0;
    await trackWithKey(client, key, 1_000_000_000, { email, event: 'page-view', data: { plan: 'pro', step: 3 } });
    out(
      `### EXPLAIN (ANALYZE, BUFFERS, WAL) Pigeon's track statement, ${email.startsWith('known') ? 'known' : 'new'} contact`,
    );
    out('');
    out('```');
    out(plans.join('\n---\n'));
    out('```');
    plans.length = 0;
    const projectId = (await client.query('SELECT id FROM projects LIMIT 1')).rows[0].id;
    await client.query(
      `WITH c AS (
         INSERT INTO contacts AS c (id, project_id, email, subscribed, data) VALUES (gen_random_uuid(), $1, $2, true, '{"plan":"pro","step":3}')
         ON CONFLICT (project_id, email) DO UPDATE SET data = c.data || EXCLUDED.data, updated_at = now()
         RETURNING c.id)
       INSERT INTO events (id, project_id, contact_id, name, data)
       SELECT gen_random_uuid(), $1, c.id, 'page-view', '{"plan":"pro","step":3}' FROM c RETURNING contact_id, id, created_at`,
      [projectId, email.replace('explain-new', 'explain-min')],
    );
    out(
      `### EXPLAIN (ANALYZE, BUFFERS, WAL) the minimal statement, ${email.startsWith('known') ? 'known' : 'new'} contact`,
    );
    out('');
    out('```');
    out(plans.join('\n---\n'));
    out('```');
  }
  await client.end();
} finally {
  await db?.close();
  for (const h of started.reverse()) await h.stop();
  await stopLeftoverPostgres(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
}
