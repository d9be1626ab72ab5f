#!/usr/bin/env node
// Pigeon benchmark harness. `pnpm bench` builds first; see bench/README.md.
//   node bench/run.mjs [--scenario health[,other]]... [--duration 10] [--connections 50] [--explain]
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { connectDb, readFirstRun, stopLeftoverPostgres } from './lib/pigeon.mjs';
import { cpuSeconds, descendantsCpuSeconds, freePort, peakRssMb, startNode } from './lib/process.mjs';
import { toMarkdown } from './lib/report.mjs';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = join(BENCH_DIR, '..');
const PIGEON_CLI = join(ROOT, 'packages/server/dist/cli.js');
const WARMUP_SECONDS = 2;
const DEFAULT_CONNECTIONS = 50;
const RATE_LIMIT_PER_MINUTE = 1_000_000_000;

const { values: args } = parseArgs({
  options: {
    scenario: { type: 'string', multiple: true },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string' },
    explain: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
});
if (args.help) {
  console.log(
    'Usage: node bench/run.mjs [--scenario <name>[,<name>]]... [--duration <s>] [--connections <n>] [--explain]',
  );
  process.exit(0);
}
const duration = positiveInt(args.duration, '--duration');
// Given on the command line, --connections applies to every scenario; otherwise a scenario's own
// `connections` (e.g. 10 for a latency measurement) or 50.
const connectionsOverride = args.connections === undefined ? undefined : positiveInt(args.connections, '--connections');
const scenarios = await loadScenarios(args.scenario?.flatMap((s) => s.split(',')).filter(Boolean));
const fixtureDefs = await loadFixtures(scenarios);

// ---- processes under test; stopped in `cleanup` whatever happens ------------------------------

const servers = { pigeon: undefined, baselines: new Map() };
let dataDir;
let db; // promise of the harness's own PostgreSQL connection (lib/pigeon.mjs), opened on first use
let currentRun;
let cleaning;
const aborter = new AbortController(); // aborted when cleanup starts: stops fetches and polling
const cleanup = () =>
  (cleaning ??= (async () => {
    aborter.abort(new Error('interrupted'));
    currentRun?.stop();
    // Our connection goes first (cancelling a seed INSERT that may be running), then the servers.
    await db?.then((d) => d.close()).catch(() => {});
    const all = [servers.pigeon, ...servers.baselines.values()].filter(Boolean);
    await Promise.all(all.map((s) => s.stop()));
    if (dataDir) {
      await stopLeftoverPostgres(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    }
  })());
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping servers…`);
    cleanup().finally(() => process.exit(130));
  });
}

let failed = false;
const started = Date.now();
const results = {
  date: new Date().toISOString(),
  machine: machineInfo(),
  settings: {
    durationSeconds: duration,
    connections: connectionsOverride ?? DEFAULT_CONNECTIONS,
    connectionsFromCommandLine: connectionsOverride !== undefined,
    explain: args.explain,
    pigeonEnv: { RATE_LIMIT_PER_MINUTE },
    warmupSeconds: WARMUP_SECONDS,
  },
  fixtures: [],
  scenarios: [],
};
try {
  const pigeon = await startPigeon();
  for (const scenario of scenarios) {
    try {
      results.scenarios.push(await runScenario(scenario, pigeon));
    } catch (err) {
      if (cleaning) throw err; // interrupted: servers are being stopped
      failed = true;
      console.error(`scenario ${scenario.name} failed: ${err.stack ?? err}`);
      results.scenarios.push({
        name: scenario.name,
        description: scenario.description,
        error: String(err.message ?? err),
        target: scenario.target ? { ...scenario.target, actual: null, met: false, reason: 'scenario failed' } : null,
      });
      if (!pigeon.alive()) throw new Error(`Pigeon exited during ${scenario.name}:\n${pigeon.output()}`);
    }
  }
} catch (err) {
  failed = true;
  if (!cleaning) console.error(err.stack ?? String(err));
} finally {
  await cleanup();
}
results.totalSeconds = round((Date.now() - started) / 1000, 1);
if (results.scenarios.length) writeResults(results);
console.log(`whole run: ${results.totalSeconds} s`);
process.exitCode = failed ? 1 : 0;

// ---- steps ------------------------------------------------------------------------------------

async function startPigeon() {
  dataDir = mkdtempSync(join(os.tmpdir(), 'pigeon-bench-'));
  // As root, embedded PostgreSQL runs as the `postgres` user, which must be able to enter the dir.
  chmodSync(dataDir, 0o711);
  const [port, pgPort] = [await freePort(), await freePort()];
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    PIGEON_DATA_DIR: dataDir,
    EMBEDDED_POSTGRES_PORT: String(pgPort),
    SHUTDOWN_TIMEOUT_SECONDS: '10',
    // Requests are still counted against the per-project limit (that UPSERT is part of every
    // keyed request's cost), but a load run never gets 429s: the default is 1,000 a minute.
    RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE),
  };
  delete env.DATABASE_URL; // always a fresh embedded PostgreSQL
  console.log(`starting Pigeon (data dir ${dataDir}, PostgreSQL port ${pgPort})…`);
  const started = Date.now();
  const pigeon = spawnServer('pigeon', {
    name: 'Pigeon',
    args: [PIGEON_CLI, 'start'],
    env,
    ready: /Pigeon is listening on/,
  });
  await pigeon.ready;
  pigeon.baseUrl = `http://127.0.0.1:${port}`;
  pigeon.dataDir = dataDir;
  pigeon.pgPort = pgPort;
  pigeon.fixtures = new Map(); // name → promise of the fixture's state, once per Pigeon start
  console.log(
    `Pigeon ready at ${pigeon.baseUrl} (pid ${pigeon.pid}) after ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return pigeon;
}

async function startBaseline(name) {
  if (!servers.baselines.has(name)) {
    const script = join(BENCH_DIR, 'baselines', `${name}.mjs`);
    spawnServer(name, { name, args: [script], env: { ...process.env, PORT: '0' }, ready: /listening on/ });
  }
  const handle = await servers.baselines.get(name).ready;
  handle.baseUrl ??= /listening on (http:\/\/\S+)/.exec(handle.output())[1];
  return handle;
}

/** Every server is registered before it starts, so `cleanup` can stop it at any moment. */
function spawnServer(key, options) {
  if (cleaning) throw new Error('interrupted');
  const handle = startNode(options);
  if (key === 'pigeon') servers.pigeon = handle;
  else servers.baselines.set(key, handle);
  return handle;
}

/**
 * A fixture (bench/fixtures/<name>.mjs) runs once per Pigeon start, the first time a scenario
 * asks for it; later scenarios get the same state. Its time is recorded in `results.fixtures`,
 * not in any scenario.
 */
function fixture(name, pigeon) {
  if (!pigeon.fixtures.has(name)) {
    const def = fixtureDefs.get(name);
    const run = (async () => {
      console.log(`fixture ${name}: ${def.description ?? ''}`);
      const t0 = Date.now();
      const entry = { name, description: def.description };
      results.fixtures.push(entry);
      try {
        const state = (await def.setup(makeContext(pigeon, DEFAULT_CONNECTIONS))) ?? {};
        Object.assign(entry, { seconds: round((Date.now() - t0) / 1000, 1), ...state });
        console.log(`fixture ${name} ready after ${entry.seconds} s${state.summary ? `: ${state.summary}` : ''}`);
        return state;
      } catch (err) {
        entry.error = String(err.message ?? err);
        throw new Error(`fixture ${name} failed: ${entry.error}`);
      }
    })();
    run.catch(() => {}); // reported by every scenario that needs it
    pigeon.fixtures.set(name, run);
  }
  return pigeon.fixtures.get(name);
}

async function runScenario(scenario, pigeon) {
  const conns = connectionsOverride ?? scenario.connections ?? DEFAULT_CONNECTIONS;
  const ctx = makeContext(pigeon, conns);
  for (const name of scenario.fixtures ?? []) ctx.fixtures[name] = await fixture(name, pigeon);
  await scenario.setup?.(ctx);
  const result = { name: scenario.name, description: scenario.description, connections: conns };
  if (scenario.run) {
    result.kind = 'task';
    result.task = await measureTask(scenario.name, pigeon, () => scenario.run(ctx));
  } else {
    const request = normalizeRequest(await scenario.request(ctx));
    Object.assign(result, {
      kind: 'load',
      request: request.requests
        ? { requests: request.requests.length }
        : { method: request.method, path: request.path },
      pigeon: await measure(`${scenario.name}`, pigeon, request, conns),
      baseline: null,
      ratio: null,
    });
    if (scenario.baseline) {
      const base = await startBaseline(scenario.baseline);
      result.baseline = {
        name: scenario.baseline,
        ...(await measure(`${scenario.name} on ${scenario.baseline}`, base, request, conns)),
      };
      result.ratio = result.pigeon.reqPerSec / result.baseline.reqPerSec;
    }
    const codes = Object.entries(result.pigeon.statusCodes);
    if (codes.length > 1)
      ctx.note(
        `Pigeon responses (measured run): ${codes.map(([c, n]) => `${c} × ${n.toLocaleString('en-US')}`).join(', ')}`,
      );
  }
  result.target = evaluateTarget(scenario.target, result);
  const t = result.target;
  if (t) {
    const verdict = t.met ? 'met' : `NOT met${t.reason ? ` (${t.reason})` : ''}`;
    console.log(`  target ${t.label}: ${t.actual ?? '–'} ${t.unit ?? ''} → ${verdict}`);
  }
  // diagnose() (e.g. EXPLAIN ANALYZE) when the target is missed, or always with --explain.
  if (scenario.diagnose && (args.explain || (t && !t.met))) {
    console.log(`  diagnosing ${scenario.name}…`);
    try {
      await scenario.diagnose(ctx);
    } catch (err) {
      if (cleaning) throw err;
      ctx.note(`diagnose() failed: ${err.message ?? err}`);
    }
  }
  result.notes = ctx.notes;
  result.attachments = ctx.attachments;
  return result;
}

/** Warm-up, then the measured run with the server's CPU sampled around it. */
async function measure(label, server, request, conns) {
  const opts = { ...request, url: server.baseUrl + (request.path ?? '/'), connections: conns };
  delete opts.path;
  console.log(`warming up ${label} (${conns} connections)…`);
  await load({ ...opts, duration: WARMUP_SECONDS });
  console.log(`measuring ${label} (${duration} s)…`);
  const cpu0 = cpuSeconds(server.pid);
  const db0 = descendantsCpuSeconds(server.pid);
  const t0 = process.hrtime.bigint();
  const r = await load({ ...opts, duration });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = cpuSeconds(server.pid) - cpu0;
  const db = descendantsCpuSeconds(server.pid) - db0;
  if (!server.alive()) throw new Error(`${server.name} exited during the run:\n${server.output()}`);
  const m = {
    reqPerSec: r.requests.average,
    totalRequests: r.requests.total,
    latencyP50Ms: r.latency.p50,
    latencyP99Ms: r.latency.p99,
    latencyMeanMs: r.latency.average,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, s.count])),
    wallSeconds: round(wall, 2),
    cpuSeconds: round(cpu, 2),
    cpuPercentOfCore: round((cpu / wall) * 100, 1),
    cpuMicrosPerRequest: r.requests.total ? round((cpu / r.requests.total) * 1e6, 1) : null,
    dbCpuSeconds: db ? round(db, 2) : null,
    dbCpuPercentOfCore: db ? round((db / wall) * 100, 1) : null,
    peakRssMb: round(peakRssMb(server.pid), 1),
  };
  console.log(
    `  ${Math.round(m.reqPerSec)} req/s, p50 ${m.latencyP50Ms} ms, p99 ${m.latencyP99Ms} ms, ` +
      `CPU ${m.cpuPercentOfCore}% of a core, peak RSS ${m.peakRssMb} MB`,
  );
  if (m.non2xx || m.errors) {
    console.warn(`  warning: ${m.non2xx} non-2xx responses, ${m.errors} errors; last server output:`);
    console.warn(server.output().trim().split('\n').slice(-5).join('\n') || '  (none)');
  }
  return m;
}

/**
 * A timed task (a scenario with `run(ctx)` instead of `request`): no warm-up, run once, with the
 * server's CPU sampled around it. What `run` returns (its own timings and counts) is kept as is.
 */
async function measureTask(label, server, run) {
  console.log(`running ${label}…`);
  const cpu0 = cpuSeconds(server.pid);
  const db0 = descendantsCpuSeconds(server.pid);
  const t0 = process.hrtime.bigint();
  const out = (await run()) ?? {};
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = cpuSeconds(server.pid) - cpu0;
  const db = descendantsCpuSeconds(server.pid) - db0;
  if (!server.alive()) throw new Error(`${server.name} exited during the run:\n${server.output()}`);
  const m = {
    ...out,
    wallSeconds: round(wall, 2),
    cpuSeconds: round(cpu, 2),
    cpuPercentOfCore: round((cpu / wall) * 100, 1),
    dbCpuSeconds: db ? round(db, 2) : null,
    dbCpuPercentOfCore: db ? round((db / wall) * 100, 1) : null,
    peakRssMb: round(peakRssMb(server.pid), 1),
  };
  console.log(
    `  ${m.summary ?? `${m.wallSeconds} s`}; CPU ${m.cpuPercentOfCore}% of a core, DB ${m.dbCpuPercentOfCore ?? 0}%`,
  );
  return m;
}

/**
 * `target: { metric, max | min, unit, label }` is checked against the scenario's Pigeon row (or
 * its task result). Non-2xx responses or errors in a load run, or a `problem` a task reports,
 * make the target not met whatever the number says.
 */
function evaluateTarget(target, result) {
  if (!target) return null;
  const source = result.task ?? result.pigeon;
  const actual = source?.[target.metric] ?? null;
  let reason = null;
  if (actual === null) reason = `no ${target.metric} measured`;
  else if (target.max !== undefined && !(actual <= target.max)) reason = `above ${target.max}`;
  else if (target.min !== undefined && !(actual >= target.min)) reason = `below ${target.min}`;
  if (result.pigeon && (result.pigeon.non2xx || result.pigeon.errors))
    reason = [reason, `${result.pigeon.non2xx} non-2xx, ${result.pigeon.errors} errors`].filter(Boolean).join('; ');
  if (result.task?.problem) reason = [reason, result.task.problem].filter(Boolean).join('; ');
  return { ...target, actual, met: reason === null, reason };
}

function load(opts) {
  return new Promise((resolve, reject) => {
    currentRun = autocannon(opts, (err, result) => {
      currentRun = undefined;
      if (cleaning) reject(new Error('interrupted'));
      else if (err) reject(err);
      else resolve(result);
    });
  });
}

// ---- helpers ----------------------------------------------------------------------------------

/**
 * What scenarios and fixtures get (see README "Adding a scenario"): `baseUrl`, `fetch`, `json`,
 * `state`, the first project's `secretKey`/`projectId` and `auth` header, `sql` on the embedded
 * PostgreSQL, `fixtures`, `note`/`attach` for the report, and `signal` (aborted on Ctrl-C).
 */
function makeContext(pigeon, conns) {
  const { baseUrl } = pigeon;
  const fetchRel = (path, { json, headers, ...init } = {}) =>
    fetch(new URL(path, baseUrl), {
      signal: aborter.signal,
      ...init,
      headers: json === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: json === undefined ? init.body : JSON.stringify(json),
    });
  let keys;
  const firstRun = () => (keys ??= readFirstRun(pigeon.dataDir));
  const ctx = {
    baseUrl,
    connections: conns,
    duration,
    state: {},
    fixtures: {},
    notes: [],
    attachments: [],
    signal: aborter.signal,
    get secretKey() {
      return firstRun().secretKey;
    },
    get projectId() {
      return firstRun().projectId;
    },
    get auth() {
      return { authorization: `Bearer ${firstRun().secretKey}` };
    },
    get publicAuth() {
      return { authorization: `Bearer ${firstRun().publicKey}` };
    },
    fetch: fetchRel,
    json: async (path, init) => {
      const res = await fetchRel(path, init);
      const text = await res.text();
      if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${path} → ${res.status}: ${text.slice(0, 500)}`);
      return text ? JSON.parse(text) : null;
    },
    /** A query on the harness's own connection to Pigeon's embedded PostgreSQL (user pigeon). */
    sql: async (text, values) => {
      if (cleaning) throw new Error('interrupted');
      db ??= connectDb({ dataDir: pigeon.dataDir, port: pigeon.pgPort });
      return (await db).query(text, values);
    },
    /** A line for the report, under the scenario. */
    note: (text) => ctx.notes.push(String(text)),
    /** A block of preformatted text (e.g. a query plan) for the report. */
    attach: (title, text) => ctx.attachments.push({ title, text: String(text) }),
  };
  return ctx;
}

/** Object bodies become JSON (also inside `requests`). */
function normalizeRequest(req) {
  const fix = (r) =>
    r.body !== undefined && typeof r.body === 'object' && !Buffer.isBuffer(r.body)
      ? { ...r, body: JSON.stringify(r.body), headers: { 'content-type': 'application/json', ...r.headers } }
      : r;
  return { ...fix(req), ...(req.requests && { requests: req.requests.map(fix) }) };
}

async function loadScenarios(names) {
  const dir = join(BENCH_DIR, 'scenarios');
  const all = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.mjs'))
    .sort()) {
    const { default: s } = await import(pathToFileURL(join(dir, file)).href);
    if (!s?.name || (typeof s.request !== 'function') === (typeof s.run !== 'function'))
      throw new Error(`${file}: default export needs name and either request() or run()`);
    all.push(s);
  }
  if (!names?.length) return all;
  const unknown = names.filter((n) => !all.some((s) => s.name === n));
  if (unknown.length) {
    console.error(`Unknown scenario(s): ${unknown.join(', ')}. Known: ${all.map((s) => s.name).join(', ')}`);
    process.exit(2);
  }
  return all.filter((s) => names.includes(s.name));
}

/** The fixtures the selected scenarios name, from bench/fixtures/<name>.mjs. */
async function loadFixtures(selected) {
  const defs = new Map();
  for (const name of new Set(selected.flatMap((s) => s.fixtures ?? []))) {
    const file = join(BENCH_DIR, 'fixtures', `${name}.mjs`);
    const { default: f } = await import(pathToFileURL(file).href).catch((err) => {
      console.error(`fixture ${name} (${file}): ${err.message}`);
      process.exit(2);
    });
    if (typeof f?.setup !== 'function') throw new Error(`${file}: default export needs setup()`);
    defs.set(name, f);
  }
  return defs;
}

function writeResults(res) {
  const dir = join(BENCH_DIR, 'results');
  mkdirSync(dir, { recursive: true });
  const markdown = toMarkdown(res);
  writeFileSync(join(dir, 'latest.json'), `${JSON.stringify(res, null, 2)}\n`);
  writeFileSync(join(dir, 'latest.md'), markdown);
  copyFileSync(join(dir, 'latest.json'), join(dir, `${res.date.replace(/[:.]/g, '-')}.json`));
  console.log(`\n${markdown}`);
  console.log(`written: bench/results/latest.json, latest.md, ${res.date.replace(/[:.]/g, '-')}.json`);
}

function machineInfo() {
  let commit = null;
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    if (execFileSync('git', ['status', '--porcelain', '--', 'packages'], { cwd: ROOT, encoding: 'utf8' }).trim())
      commit += '+dirty';
  } catch {}
  return {
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    totalMemMb: Math.round(os.totalmem() / 2 ** 20),
    commit,
  };
}

function positiveInt(value, flag) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`${flag} must be a positive integer, got "${value}"`);
    process.exit(2);
  }
  return n;
}

function round(v, digits) {
  return v === null || v === undefined ? null : Number(v.toFixed(digits));
}
