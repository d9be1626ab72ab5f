#!/usr/bin/env node
// Pigeon benchmark harness. `pnpm bench` builds first; see bench/README.md.
//   node bench/run.mjs [--scenario health[,other]]... [--duration 10] [--connections 50] [--explain]
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { summarizeCpuProfile } from './lib/cpuprofile.mjs';
import { connectDb, pigeonEnvironment, readFirstRun, stopLeftoverPostgres } from './lib/pigeon.mjs';
import {
  cpuSeconds,
  descendantsCpuSeconds,
  freePort,
  machineBusyCpuSeconds,
  ownCpuSeconds,
  peakRssMb,
  rssMb,
  startNode,
  supervisedApiPid,
} from './lib/process.mjs';
import { toMarkdown } from './lib/report.mjs';
import { smtpSinkClient } from './lib/sending.mjs';

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
    'cpu-prof': { type: 'boolean', default: false },
    'pigeon-env': { type: 'string', multiple: true },
    help: { type: 'boolean', short: 'h' },
  },
});
if (args.help) {
  console.log(
    'Usage: node bench/run.mjs [--scenario <name>[,<name>]]... [--duration <s>] [--connections <n>] [--explain]\n' +
      '                          [--cpu-prof] [--pigeon-env KEY=VALUE]...',
  );
  process.exit(0);
}
const duration = positiveInt(args.duration, '--duration');
// Given on the command line, --connections applies to every scenario; otherwise a scenario's own
// `connections` (e.g. 10 for a latency measurement) or 50.
const connectionsOverride = args.connections === undefined ? undefined : positiveInt(args.connections, '--connections');
// --pigeon-env KEY=VALUE (repeatable): on top of every Pigeon's env, scenarios' own included.
const envOverride = Object.fromEntries(
  (args['pigeon-env'] ?? []).map((kv) => {
    const i = kv.indexOf('=');
    if (i < 1) {
      console.error(`--pigeon-env must be KEY=VALUE, got "${kv}"`);
      process.exit(2);
    }
    return [kv.slice(0, i), kv.slice(i + 1)];
  }),
);
const scenarios = await loadScenarios(args.scenario?.flatMap((s) => s.split(',')).filter(Boolean));
const fixtureDefs = await loadFixtures(scenarios);

// ---- processes under test; stopped in `cleanup` whatever happens ------------------------------

// Every Pigeon instance (its data dir, its node process, the harness's connection to its
// PostgreSQL), the baselines and the services (SMTP sinks) are registered before they start, so
// `cleanup` can stop them at any moment.
const servers = { pigeons: new Set(), baselines: new Map(), services: new Set() };
let currentRun;
let cleaning;
const aborter = new AbortController(); // aborted when cleanup starts: stops fetches and polling
const cleanup = () =>
  (cleaning ??= (async () => {
    aborter.abort(new Error('interrupted'));
    currentRun?.stop();
    await Promise.all([...servers.pigeons].map(stopPigeon));
    await Promise.all([...servers.baselines.values(), ...servers.services].map((s) => s.stop()));
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
    pigeonEnv: { RATE_LIMIT_PER_MINUTE, ...envOverride },
    warmupSeconds: WARMUP_SECONDS,
    cpuProf: args['cpu-prof'],
  },
  fixtures: [],
  scenarios: [],
  profiles: [],
};
// Scenarios without `pigeonEnv` (or `smtpSink`) share one Pigeon, in file-name order; then each
// scenario that declares them gets a Pigeon of its own (fresh data dir, its env on top of the
// harness's), with its SMTP sink, stopped again before the next one starts.
const shared = scenarios.filter((s) => !ownPigeon(s));
const isolated = scenarios.filter(ownPigeon);
try {
  if (shared.length) {
    let pigeon;
    try {
      pigeon = await startPigeon();
      for (const scenario of shared) {
        await attempt(scenario, () => runScenario(scenario, pigeon));
        if (!pigeon.alive()) throw new Error(`Pigeon exited during ${scenario.name}:\n${pigeon.output()}`);
      }
    } catch (err) {
      // The shared Pigeon did not start or died: its remaining scenarios are not run; the
      // scenarios with a Pigeon of their own still are.
      if (cleaning) throw err;
      failed = true;
      console.error(err.stack ?? String(err));
    } finally {
      // Stopped before the next instance starts: its CPU and memory are not the next one's.
      for (const instance of [...servers.pigeons]) await stopPigeon(instance);
    }
  }
  for (const scenario of isolated) {
    const services = {};
    let pigeon;
    try {
      await attempt(scenario, async () => {
        if (scenario.smtpSink) services.smtpSink = await startSmtpSink();
        if (scenario.dnsServer) services.dnsServer = await startDnsServer();
        const env = await resolveEnv(scenario.pigeonEnv, services);
        pigeon = await startPigeon(env, services, scenario.name);
        return runScenario(scenario, pigeon);
      });
    } finally {
      if (pigeon) await stopPigeon(pigeon.instance);
      for (const service of [services.smtpSink, services.dnsServer]) {
        if (!service) continue;
        await service.stop();
        servers.services.delete(service);
      }
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

function ownPigeon(scenario) {
  return Boolean(scenario.pigeonEnv || scenario.smtpSink || scenario.dnsServer);
}

/** `pigeonEnv` is an object or a (possibly async) function of the scenario's services (`{ smtpSink, dnsServer }`); values become strings. */
async function resolveEnv(pigeonEnv, services) {
  const env = typeof pigeonEnv === 'function' ? await pigeonEnv(services) : (pigeonEnv ?? {});
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
}

/** Runs a scenario and records its result; a failure is recorded and the run goes on. */
async function attempt(scenario, fn) {
  try {
    results.scenarios.push(await fn());
  } catch (err) {
    if (cleaning) throw err; // interrupted: servers are being stopped
    failed = true;
    console.error(`scenario ${scenario.name} failed: ${err.stack ?? err}`);
    results.scenarios.push({
      name: scenario.name,
      description: scenario.description,
      error: String(err.message ?? err),
      target: mapTargets(scenario.target, (t) => ({ ...t, actual: null, met: false, reason: 'scenario failed' })),
    });
  }
}

/**
 * Starts `node packages/server/dist/cli.js start` on a fresh data dir and free ports, with
 * `extraEnv` (a scenario's `pigeonEnv`) on top of the harness's own settings.
 */
async function startPigeon(extraEnv = {}, services = {}, forScenario = undefined) {
  if (cleaning) throw new Error('interrupted');
  const dataDir = mkdtempSync(join(os.tmpdir(), 'pigeon-bench-'));
  // The instance (data dir, harness connection) is registered before anything else can fail.
  const instance = { dataDir, handle: undefined, db: undefined, stopped: undefined, baselines: [] };
  servers.pigeons.add(instance);
  // As root, embedded PostgreSQL runs as the `postgres` user, which must be able to enter the dir.
  chmodSync(dataDir, 0o711);
  const [port, pgPort] = [await freePort(), await freePort()];
  // Requests are still counted against the per-project limit (that UPSERT is part of every
  // keyed request's cost), but a load run never gets 429s: the default is 1,000 a minute.
  // Always a fresh embedded PostgreSQL; SMTP only when a scenario asks for it (else the outbox).
  const env = pigeonEnvironment({
    port,
    pgPort,
    dataDir,
    rateLimitPerMinute: RATE_LIMIT_PER_MINUTE,
    extra: { ...extraEnv, ...envOverride },
  });
  const shown = Object.entries({ ...extraEnv, ...envOverride }).map(([k, v]) => `${k}=${v}`);
  console.log(
    `starting Pigeon${forScenario ? ` for ${forScenario}` : ''} (data dir ${dataDir}, PostgreSQL port ${pgPort}` +
      `${shown.length ? `, ${shown.join(' ')}` : ''})…`,
  );
  const started = Date.now();
  const nodeArgs = [];
  if (args['cpu-prof']) {
    // Written by Pigeon's node when it exits (after its SIGTERM shutdown); summarized in stopPigeon.
    const profiles = join(BENCH_DIR, 'results', 'profiles');
    instance.profileDir = join(
      profiles,
      `${results.date.replace(/[:.]/g, '-')}-${(forScenario ?? 'shared').replace(/\W/g, '_')}`,
    );
    mkdirSync(instance.profileDir, { recursive: true });
    writeFileSync(join(profiles, '.gitignore'), '*\n');
    instance.profileFor = forScenario ?? 'shared Pigeon';
    nodeArgs.push('--cpu-prof', '--cpu-prof-dir', instance.profileDir);
  }
  if (cleaning) throw new Error('interrupted');
  const pigeon = startNode({
    name: 'Pigeon',
    args: [...nodeArgs, PIGEON_CLI, 'start'],
    env,
    ready: /Pigeon is listening on/,
  });
  instance.handle = pigeon;
  await pigeon.ready;
  pigeon.pid = supervisedApiPid(pigeon.pid);
  Object.assign(pigeon, {
    instance,
    baseUrl: `http://127.0.0.1:${port}`,
    dataDir,
    pgPort,
    env: { ...extraEnv, ...envOverride },
    services,
    fixtures: new Map(), // name → promise of the fixture's state, once per Pigeon start
  });
  console.log(
    `Pigeon ready at ${pigeon.baseUrl} (pid ${pigeon.pid}) after ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return pigeon;
}

/**
 * Closes the harness's connection (cancelling a query still running, e.g. a seed INSERT),
 * SIGTERMs Pigeon and waits (it stops its PostgreSQL), stops a PostgreSQL still running on the
 * data dir, removes the data dir. Once per instance.
 */
function stopPigeon(instance) {
  instance.stopped ??= (async () => {
    await instance.db?.then((d) => d.close()).catch(() => {});
    // Its baselines first: they hold connections to this Pigeon's PostgreSQL.
    await Promise.all(instance.baselines.map((b) => b.stop()));
    await instance.handle?.stop();
    await stopLeftoverPostgres(instance.dataDir);
    rmSync(instance.dataDir, { recursive: true, force: true });
    servers.pigeons.delete(instance);
    if (instance.profileDir) {
      for (const file of readdirSync(instance.profileDir).filter((f) => f.endsWith('.cpuprofile'))) {
        const path = join(instance.profileDir, file);
        try {
          results.profiles.push({
            for: instance.profileFor,
            file: relative(ROOT, path),
            summary: summarizeCpuProfile(path),
          });
        } catch (err) {
          console.error(`could not summarize ${path}: ${err.message}`);
        }
      }
    }
  })();
  return instance.stopped;
}

/** services/smtp-sink.mjs in its own process; stopped after its scenario (or by `cleanup`). */
async function startSmtpSink() {
  if (cleaning) throw new Error('interrupted');
  const handle = startNode({
    name: 'smtp-sink',
    args: [join(BENCH_DIR, 'services', 'smtp-sink.mjs')],
    env: { ...process.env },
    ready: /listening on http:\/\/\S+ smtp:\/\/\S+/,
    timeoutMs: 15_000,
  });
  servers.services.add(handle);
  await handle.ready;
  const sink = smtpSinkClient(handle);
  console.log(`SMTP sink at ${sink.url} (pid ${sink.pid})`);
  return sink;
}

/** services/dns-server.mjs in its own process (`dnsServer: true`): `address` for DNS_SERVERS. */
async function startDnsServer() {
  if (cleaning) throw new Error('interrupted');
  const handle = startNode({
    name: 'dns-server',
    args: [join(BENCH_DIR, 'services', 'dns-server.mjs')],
    env: { ...process.env },
    ready: /dns-server listening on \S+/,
    timeoutMs: 15_000,
  });
  servers.services.add(handle);
  await handle.ready;
  handle.address = /dns-server listening on (\S+)/.exec(handle.output())[1];
  console.log(`DNS server at ${handle.address} (pid ${handle.pid})`);
  return handle;
}

/**
 * A baseline server (baselines/<name>.mjs), one per Pigeon instance: the same-work baselines
 * (bare-track, bare-send, bare-express) get that Pigeon's PostgreSQL in `BASELINE_PG` and use its
 * database, so both sides of a ratio write to the same tables in the same run. Stopped with it.
 */
async function startBaseline(name, pigeon) {
  const key = `${name}@${pigeon.pgPort}`;
  if (!servers.baselines.has(key)) {
    if (cleaning) throw new Error('interrupted');
    const script = join(BENCH_DIR, 'baselines', `${name}.mjs`);
    const env = {
      ...process.env,
      PORT: '0',
      BASELINE_PG: JSON.stringify(baselinePg(pigeon)),
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE),
      ...(pigeon.env.DATABASE_POOL_SIZE && { BASELINE_POOL_SIZE: pigeon.env.DATABASE_POOL_SIZE }),
    };
    const handle = startNode({ name, args: [script], env, ready: /listening on/ });
    servers.baselines.set(key, handle);
    pigeon.instance.baselines.push(handle);
  }
  const handle = await servers.baselines.get(key).ready;
  handle.baseUrl ??= /listening on (http:\/\/\S+)/.exec(handle.output())[1];
  return handle;
}

/** The connection settings of `pigeon`'s embedded PostgreSQL, as the baselines get them in `BASELINE_PG`. */
function baselinePg(pigeon) {
  const { embeddedPostgresPassword: password } = JSON.parse(readFileSync(join(pigeon.dataDir, 'secrets.json'), 'utf8'));
  return { host: '127.0.0.1', port: pigeon.pgPort, user: 'pigeon', password, database: 'pigeon' };
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
  if (ownPigeon(scenario)) {
    result.pigeonEnv = pigeon.env;
    const env = Object.entries(pigeon.env).map(([k, v]) => `${k}=${v}`);
    ctx.note(
      `own Pigeon instance (fresh data dir)${env.length ? ` with ${env.join(', ')}` : ''}` +
        (pigeon.services.smtpSink ? "; SMTP_URL is the harness's smtp-server sink, in its own process" : ''),
    );
  }
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
      pigeon: withExpectedStatus(await measure(`${scenario.name}`, pigeon, request, conns), scenario.expectStatus),
      baseline: null,
      ratio: null,
    });
    // `baseline` is one name or several (the first is the primary: `ratio`, `ratioPercent`); each
    // is measured right after Pigeon, in the order given, with the very same request.
    const baselineNames = [scenario.baseline ?? []].flat();
    result.others = [];
    for (const [i, name] of baselineNames.entries()) {
      const base = await startBaseline(name, pigeon);
      const measured = { name, ...(await measure(`${scenario.name} on ${name}`, base, request, conns)) };
      const ratio = result.pigeon.reqPerSec / measured.reqPerSec;
      const cpuRatio = round(result.pigeon.cpuMicrosPerRequest / measured.cpuMicrosPerRequest, 2);
      // For targets: throughput as % of the baseline's, CPU per request as a multiple of its.
      result.pigeon[`ratioPercent:${name}`] = round(ratio * 100, 1);
      if (i === 0) {
        Object.assign(result, { baseline: measured, ratio });
        Object.assign(result.pigeon, { ratioPercent: round(ratio * 100, 1), cpuRatio });
      } else result.others.push({ ...measured, ratio, cpuRatio });
    }
    const codes = Object.entries(result.pigeon.statusCodes);
    if (codes.length > 1)
      ctx.note(
        `Pigeon responses (measured run): ${codes.map(([c, n]) => `${c} × ${n.toLocaleString('en-US')}`).join(', ')}`,
      );
    const sink = result.pigeon.sink;
    if (sink)
      ctx.note(
        `SMTP sink during the measured run: ${sink.received.toLocaleString('en-US')} messages received ` +
          `(${Math.round(sink.perSec).toLocaleString('en-US')}/s), sink CPU ${sink.cpuPercentOfCore}% of a core`,
      );
  }
  // after(): notes that need the measured run to be over (e.g. what is left in a queue).
  await scenario.after?.(ctx, result);
  // `target` is one target or an array of them (a task measuring two things, each with its own).
  result.target = mapTargets(scenario.target, (t) => evaluateTarget(t, result));
  const targets = [result.target ?? []].flat();
  for (const t of targets) {
    const verdict = t.met ? 'met' : `NOT met${t.reason ? ` (${t.reason})` : ''}`;
    console.log(`  target ${t.label}: ${t.actual ?? '–'} ${t.unit ?? ''} → ${verdict}`);
  }
  // diagnose() (e.g. EXPLAIN ANALYZE) when a target is missed, or always with --explain.
  if (scenario.diagnose && (args.explain || targets.some((t) => !t.met))) {
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

/**
 * Runs `work` with the server's CPU, its PostgreSQL's CPU, the SMTP sink and the whole machine
 * sampled around it; fails if the server died meanwhile.
 */
async function sampled(server, work) {
  const sink0 = await sinkSample(server);
  const machine0 = machineSample();
  const cpu0 = cpuSeconds(server.pid);
  const db0 = descendantsCpuSeconds(server.pid);
  const t0 = process.hrtime.bigint();
  const value = await work();
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = cpuSeconds(server.pid) - cpu0;
  const db = descendantsCpuSeconds(server.pid) - db0;
  const sink = sinkDelta(sink0, await sinkSample(server), wall);
  const machine = machineDelta(machine0, machineSample(), wall, cpu + db + (sink?.cpuSeconds ?? 0));
  if (!server.alive()) throw new Error(`${server.name} exited during the run:\n${server.output()}`);
  return { value, wall, cpu, db, sink, machine };
}

/**
 * A scenario whose right answer is not 2xx (a redirect) sets `expectStatus`: then responses with
 * any other status are the failures, in place of autocannon's non-2xx count.
 */
function withExpectedStatus(m, expectStatus) {
  if (!expectStatus) return m;
  const answered = Object.values(m.statusCodes).reduce((a, b) => a + b, 0);
  return { ...m, expectStatus, non2xx: answered - (m.statusCodes[expectStatus] ?? 0) };
}

/** Warm-up, then the measured run with the server's CPU sampled around it. */
async function measure(label, server, request, conns) {
  const opts = { ...request, url: server.baseUrl + (request.path ?? '/'), connections: conns };
  delete opts.path;
  console.log(`warming up ${label} (${conns} connections)…`);
  await load({ ...opts, duration: WARMUP_SECONDS });
  console.log(`measuring ${label} (${duration} s)…`);
  const { value: r, wall, cpu, db, sink, machine } = await sampled(server, () => load({ ...opts, duration }));
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
    ...(sink && { sink }),
    machine,
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
  const { value, wall, cpu, db, sink, machine } = await sampled(server, run);
  const out = value ?? {};
  const m = {
    ...out,
    wallSeconds: round(wall, 2),
    cpuSeconds: round(cpu, 2),
    cpuPercentOfCore: round((cpu / wall) * 100, 1),
    dbCpuSeconds: db ? round(db, 2) : null,
    dbCpuPercentOfCore: db ? round((db / wall) * 100, 1) : null,
    peakRssMb: round(peakRssMb(server.pid), 1),
    ...(sink && { sinkCpuPercentOfCore: sink.cpuPercentOfCore }),
    machine,
  };
  console.log(
    `  ${m.summary ?? `${m.wallSeconds} s`}; CPU ${m.cpuPercentOfCore}% of a core, DB ${m.dbCpuPercentOfCore ?? 0}%`,
  );
  return m;
}

/** The whole machine's busy CPU seconds and the harness's own (autocannon runs in it). */
function machineSample() {
  return { busy: machineBusyCpuSeconds(), harness: ownCpuSeconds() };
}

/**
 * % of a core over the run: the machine busy in all (200 = both cores of a 2-core machine), the
 * harness (load generator), and everything else that is neither the server nor its PostgreSQL /
 * sink (`serverCpu`): other people's processes competing for the same cores.
 */
function machineDelta(a, b, wall, serverCpu) {
  const busy = b.busy - a.busy;
  const harness = b.harness - a.harness;
  const pct = (v) => round((v / wall) * 100, 1);
  return {
    cores: os.cpus().length,
    busyPercentOfCore: pct(busy),
    harnessCpuPercentOfCore: pct(harness),
    otherCpuPercentOfCore: pct(Math.max(0, busy - harness - serverCpu)),
  };
}

/** Messages received and CPU seconds of the server's SMTP sink, if it has one. */
async function sinkSample(server) {
  const sink = server.services?.smtpSink;
  if (!sink) return null;
  return { count: (await sink.stats()).count, cpu: cpuSeconds(sink.pid) };
}

function sinkDelta(a, b, wall) {
  if (!a || !b) return null;
  const received = b.count - a.count;
  return {
    received,
    perSec: round(received / wall, 1),
    cpuSeconds: round(b.cpu - a.cpu, 2),
    cpuPercentOfCore: round(((b.cpu - a.cpu) / wall) * 100, 1),
  };
}

/** `fn` applied to a scenario's target, or to each of its targets when it has an array of them. */
function mapTargets(target, fn) {
  if (!target) return null;
  return Array.isArray(target) ? target.map(fn) : fn(target);
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
    /** Pigeon's data dir (first-run.txt holds the owner's console login). */
    dataDir: pigeon.dataDir,
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
      if (cleaning || pigeon.instance.stopped) throw new Error('interrupted');
      pigeon.instance.db ??= connectDb({ dataDir: pigeon.dataDir, port: pigeon.pgPort });
      return (await pigeon.instance.db).query(text, values);
    },
    /**
     * `BASELINE_PG` for a baseline process a timed task starts itself (a same-work ceiling on
     * Pigeon's PostgreSQL, see baselines/_db.mjs): the connection settings, as JSON.
     */
    get baselinePg() {
      return JSON.stringify(baselinePg(pigeon));
    },
    /** The env this Pigeon got on top of the harness's (a scenario's resolved `pigeonEnv`). */
    pigeonEnv: pigeon.env,
    pigeonPid: pigeon.pid,
    /** The scenario's SMTP sink (`smtpSink: true`): `url`, `pid`, `stats()`, `messages()`, `reset()`. */
    smtpSink: pigeon.services.smtpSink,
    /**
     * CPU seconds used so far (user + system): Pigeon's node process, its PostgreSQL (postmaster
     * and backends) and the SMTP sink. Differences of two snapshots give CPU over a window.
     */
    cpu: () => ({
      at: performance.now(),
      pigeon: cpuSeconds(pigeon.pid),
      db: descendantsCpuSeconds(pigeon.pid),
      sink: pigeon.services.smtpSink ? cpuSeconds(pigeon.services.smtpSink.pid) : null,
      machine: machineBusyCpuSeconds(),
      harness: ownCpuSeconds(),
    }),
    /** Pigeon's current (VmRSS) and peak (VmHWM) resident memory in MB. */
    memory: () => ({ rssMb: rssMb(pigeon.pid), peakRssMb: peakRssMb(pigeon.pid) }),
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
    all.push(...expandVariants(s));
  }
  if (!names?.length) return all;
  // `delivery-10k` selects all its variants, `delivery-10k:c8` one of them.
  const selects = (n, s) => s.name === n || s.baseName === n;
  const unknown = names.filter((n) => !all.some((s) => selects(n, s)));
  if (unknown.length) {
    console.error(`Unknown scenario(s): ${unknown.join(', ')}. Known: ${all.map((s) => s.name).join(', ')}`);
    process.exit(2);
  }
  return all.filter((s) => names.some((n) => selects(n, s)));
}

/**
 * `variants: [{ name: 'c8', pigeonEnv: { DELIVERY_CONCURRENCY: 8 } }, …]` turns one scenario into
 * one per variant, named `<name>:<variant>`, each with the scenario's `pigeonEnv` and the
 * variant's on top (so each gets its own Pigeon).
 */
function expandVariants(s) {
  if (!s.variants?.length) return [s];
  return s.variants.map((v) => ({
    ...s,
    variants: undefined,
    baseName: s.name,
    variant: v.name,
    name: `${s.name}:${v.name}`,
    description: `${s.description}${v.description ? ` (${v.description})` : ''}`,
    pigeonEnv: async (services) => ({
      ...(await resolveEnv(s.pigeonEnv, services)),
      ...(await resolveEnv(v.pigeonEnv, services)),
    }),
  }));
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
