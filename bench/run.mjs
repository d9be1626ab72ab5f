#!/usr/bin/env node
// Pigeon benchmark harness. `pnpm bench` builds first; see bench/README.md.
//   node bench/run.mjs [--scenario health[,other]]... [--duration 10] [--connections 50]
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { cpuSeconds, descendantsCpuSeconds, freePort, peakRssMb, startNode } from './lib/process.mjs';
import { toMarkdown } from './lib/report.mjs';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = join(BENCH_DIR, '..');
const PIGEON_CLI = join(ROOT, 'packages/server/dist/cli.js');
const WARMUP_SECONDS = 2;

const { values: args } = parseArgs({
  options: {
    scenario: { type: 'string', multiple: true },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (args.help) {
  console.log('Usage: node bench/run.mjs [--scenario <name>[,<name>]]... [--duration <s>] [--connections <n>]');
  process.exit(0);
}
const duration = positiveInt(args.duration, '--duration');
const connections = positiveInt(args.connections, '--connections');
const scenarios = await loadScenarios(args.scenario?.flatMap((s) => s.split(',')).filter(Boolean));

// ---- processes under test; stopped in `cleanup` whatever happens ------------------------------

const servers = { pigeon: undefined, baselines: new Map() };
let dataDir;
let currentRun;
let cleaning;
const cleanup = () =>
  (cleaning ??= (async () => {
    currentRun?.stop();
    const all = [servers.pigeon, ...servers.baselines.values()].filter(Boolean);
    await Promise.all(all.map((s) => s.stop()));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  })());
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping servers…`);
    cleanup().finally(() => process.exit(130));
  });
}

let failed = false;
const results = {
  date: new Date().toISOString(),
  machine: machineInfo(),
  settings: { durationSeconds: duration, connections, warmupSeconds: WARMUP_SECONDS },
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
if (results.scenarios.length) writeResults(results);
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

async function runScenario(scenario, pigeon) {
  const ctx = makeContext(pigeon.baseUrl);
  await scenario.setup?.(ctx);
  const request = normalizeRequest(await scenario.request(ctx));
  const result = {
    name: scenario.name,
    description: scenario.description,
    request: request.requests ? { requests: request.requests.length } : { method: request.method, path: request.path },
    pigeon: await measure(`${scenario.name}`, pigeon, request),
    baseline: null,
    ratio: null,
  };
  if (scenario.baseline) {
    const base = await startBaseline(scenario.baseline);
    result.baseline = {
      name: scenario.baseline,
      ...(await measure(`${scenario.name} on ${scenario.baseline}`, base, request)),
    };
    result.ratio = result.pigeon.reqPerSec / result.baseline.reqPerSec;
  }
  return result;
}

/** Warm-up, then the measured run with the server's CPU sampled around it. */
async function measure(label, server, request) {
  const opts = { ...request, url: server.baseUrl + (request.path ?? '/'), connections };
  delete opts.path;
  console.log(`warming up ${label}…`);
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
 * What scenarios get: `baseUrl`, `fetch(path, init)` (global fetch relative to Pigeon; an object
 * `init.json` is sent as JSON), `json(path, init)` (same, throws unless 2xx, returns the parsed
 * body) and `state`, a place to keep what setup created for `request`.
 */
function makeContext(baseUrl) {
  const fetchRel = (path, { json, headers, ...init } = {}) =>
    fetch(new URL(path, baseUrl), {
      ...init,
      headers: json === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: json === undefined ? init.body : JSON.stringify(json),
    });
  return {
    baseUrl,
    connections,
    duration,
    state: {},
    fetch: fetchRel,
    json: async (path, init) => {
      const res = await fetchRel(path, init);
      const text = await res.text();
      if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${path} → ${res.status}: ${text.slice(0, 500)}`);
      return text ? JSON.parse(text) : null;
    },
  };
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
    if (!s?.name || typeof s.request !== 'function')
      throw new Error(`${file}: default export needs name and request()`);
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
