// Child processes for the bench (Pigeon, baselines) and what /proc says about them.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

const live = new Set();
// Last resort if the harness exits without stopping a child (crash, process.exit): the child
// is told to stop; Pigeon then stops its own PostgreSQL.
process.on('exit', () => {
  for (const child of live) {
    try {
      process.kill(child.pid, 'SIGTERM');
    } catch {}
  }
});

/** A TCP port that was free a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `node <args>` in its own process group (so a Ctrl-C in the terminal reaches only the
 * harness, which then stops children in order). `handle.ready` resolves once the output matches
 * `ready`; on failure it rejects with the child's output, after stopping it. `handle.pid` is the
 * node process itself.
 */
export function startNode({ name, args, env, ready, timeoutMs = 90_000 }) {
  const child = spawn(process.execPath, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let output = '';
  // BENCH_LOG_DIR keeps every child's whole output (one file per name) for a run to read afterwards.
  const logFile = process.env.BENCH_LOG_DIR
    ? join(process.env.BENCH_LOG_DIR, `${name.replace(/[^\w.-]+/g, '-')}-${Date.now()}.log`)
    : null;
  const keep = (chunk) => {
    output = (output + chunk).slice(-8000);
    if (logFile) appendFileSync(logFile, chunk);
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  exited.then(() => live.delete(child));

  const handle = {
    name,
    pid: child.pid,
    output: () => output,
    alive: () => child.exitCode === null && child.signalCode === null,
    stop: once(() => stopGroup(child, exited)),
  };
  handle.ready = new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not become ready within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    const check = () => {
      if (!ready.test(output)) return;
      clearTimeout(timer);
      child.stdout.off('data', check);
      resolve(handle);
    };
    child.stdout.on('data', check);
    child.once('error', reject);
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (code ${code}, signal ${signal}) before it was ready`));
    });
  }).catch(async (err) => {
    await handle.stop();
    throw new Error(`${err.message}\n--- ${name} output ---\n${output.trim() || '(none)'}\n---`);
  });
  return handle;
}

/** SIGTERM the child and wait; then make sure nothing of its process group (PostgreSQL) is left. */
async function stopGroup(child, exited) {
  const pgid = child.pid;
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    if (!(await within(exited, 30_000))) {
      console.error(`pid ${pgid} did not stop within 30 s after SIGTERM; killing its process group`);
      signalGroup(pgid, 'SIGKILL');
      await exited;
    }
  }
  // Anything still in the group (e.g. PostgreSQL after a crash): SIGINT is PostgreSQL's fast shutdown.
  if (groupAlive(pgid)) {
    signalGroup(pgid, 'SIGINT');
    for (let i = 0; i < 100 && groupAlive(pgid); i++) await sleep(100);
    if (groupAlive(pgid)) signalGroup(pgid, 'SIGKILL');
  }
}

const signalGroup = (pgid, signal) => {
  try {
    process.kill(-pgid, signal);
  } catch {}
};
const groupAlive = (pgid) => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Resolves true if `promise` settles within `ms`, else false (leaving no timer behind). */
function within(promise, ms) {
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([promise.then(() => true), timeout]).finally(() => clearTimeout(timer));
}
function once(fn) {
  let p;
  return () => (p ??= fn());
}

// ---- /proc --------------------------------------------------------------------------------

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Fields of /proc/<pid>/stat after the `(comm)` field: [0] = state (field 3 in proc(5)). */
function statFields(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU seconds (user + system) used so far by `pid`. */
export function cpuSeconds(pid) {
  const f = statFields(pid);
  return (Number(f[11]) + Number(f[12])) / CLK_TCK; // utime, stime
}

/**
 * CPU seconds used so far by all descendants of `pid` (Pigeon's PostgreSQL and its backends,
 * which run in their own sessions). Children that already ended and were reaped count through
 * their parent's cutime/cstime.
 */
export function descendantsCpuSeconds(pid) {
  return descendants(pid).reduce((total, p) => total + p.ticks, 0) / CLK_TCK;
}

/**
 * The same, split by program: PostgreSQL's processes serving connections (`backends`: the
 * statements' cost), its other processes (`postgresOther`: postmaster, autovacuum, checkpointer,
 * WAL writer, and the backends that already ended, counted through the postmaster), and the
 * others (Pigeon's worker processes), so a scenario can tell the database's cost from its workers'.
 */
export function descendantsCpuByProgram(pid) {
  const split = { postgres: 0, backends: 0, postgresOther: 0, other: 0 };
  for (const p of descendants(pid)) {
    const seconds = p.ticks / CLK_TCK;
    if (!p.comm.startsWith('postgres')) {
      split.other += seconds;
      continue;
    }
    split.postgres += seconds;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${p.pid}/cmdline`, 'utf8');
    } catch {} // ended meanwhile
    // A backend's title: "postgres: <user> <database> <host>(<port>) <state>".
    if (/\(\d+\)|\[local\]/.test(cmdline)) split.backends += seconds;
    else split.postgresOther += seconds;
  }
  return split;
}

/** The descendants of `pid` with their CPU ticks (self + reaped children) and program name. */
function descendants(pid) {
  const procs = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.push({
        pid: Number(entry),
        ppid: Number(f[1]),
        comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
        ticks: [11, 12, 13, 14].reduce((t, i) => t + Number(f[i]), 0),
      });
    } catch {} // the process ended meanwhile
  }
  const found = [];
  const parents = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of procs) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        found.push(p);
        grew = true;
      }
    }
  }
  return found;
}

/**
 * The API process of a `pigeon start` whose pid is `launcherPid`: since the API runs in a supervised
 * child (with its heap capped), the process measured as "Pigeon" is that child, whose descendants are
 * the embedded PostgreSQL and the worker processes. The launcher itself only waits.
 */
export function supervisedApiPid(launcherPid) {
  for (const p of descendants(launcherPid)) {
    if (p.ppid !== launcherPid) continue;
    try {
      if (readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').split('\0').includes('--supervised')) return p.pid;
    } catch {} // ended meanwhile
  }
  return launcherPid; // an older Pigeon (before the supervised API): the launched process is the API
}

/** Peak resident set size (VmHWM) of `pid` in MB. */
export function peakRssMb(pid) {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return kb ? Number(kb) / 1024 : null;
}

/** Current resident set size (VmRSS) of `pid` in MB. */
export function rssMb(pid) {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return kb ? Number(kb) / 1024 : null;
}

/**
 * CPU seconds the whole machine has been busy (all cores summed: user, nice, system, irq,
 * softirq, steal; not idle or iowait), from /proc/stat. With the harness's and the servers' own
 * CPU it tells how much went to other processes (e.g. someone's test run) during a measurement.
 */
export function machineBusyCpuSeconds() {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq + (steal || 0)) / CLK_TCK;
}

/** CPU seconds of this process (the harness, with autocannon running in it). */
export function ownCpuSeconds() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}
