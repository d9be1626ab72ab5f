#!/usr/bin/env node
// Where the machine's CPU goes during a window of a bench command, measured by the kernel (`perf`),
// not by V8's --cpu-prof. V8's profiler samples wall time: on two saturated cores a thread preempted
// in a syscall is counted in that syscall, so its profiles showed `writev` at 17–24% of a delivery
// worker's "busy" time where perf finds a few percent. Here every sample is a thread on a CPU.
//
//   node bench/cpu-split.mjs [--after 40] [--seconds 10] [--freq 1999] [--rate N] -- <command …>
//
// Runs the command (its output passes through); `--after` seconds in, records every CPU for
// `--seconds` (`perf record -e cpu-clock -a -g`), then prints per process role (Pigeon worker, Pigeon
// API, PostgreSQL, SMTP sink, webhook receiver, bare baseline, harness, idle) the cores it used, a
// node role's main threads apart from its helper threads (V8's garbage collector and optimizing
// compiler), and the main threads' samples by what they were in (RSA signing, nodemailer, pg,
// Pigeon's own code, system calls, GC, compilation). `--rate`: units (messages, deliveries) per
// second in the window, to print milliseconds of CPU per unit as well. `--functions N`: per node
// role, the N functions its main threads' samples were in most (innermost frame), and the N of
// Pigeon's own functions nearest the top of each sample's stack (what Pigeon code led to the work).
// `--keep FILE`: the samples with their stacks (`perf script` text) are written to FILE.
//
// JavaScript frames have names when node runs with --perf-basic-prof: the command gets it in
// NODE_OPTIONS (children that inherit the environment, Pigeon's workers included, get it too).
// Needs `perf` (Debian: linux-perf) and permission to record every CPU (root, or
// kernel.perf_event_paranoid ≤ 0). The perf data and the JIT maps it reads are removed afterwards.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const dash = process.argv.indexOf('--');
if (dash < 0 || dash === process.argv.length - 1) {
  console.error(
    'usage: node bench/cpu-split.mjs [--after S] [--seconds S] [--freq HZ] [--rate N] [--functions N] [--keep FILE] -- <command …>',
  );
  process.exit(2);
}
const { values: args } = parseArgs({
  args: process.argv.slice(2, dash),
  options: {
    after: { type: 'string', default: '40' },
    seconds: { type: 'string', default: '10' },
    freq: { type: 'string', default: '1999' },
    rate: { type: 'string' },
    functions: { type: 'string', default: '0' },
    keep: { type: 'string' },
  },
});
const command = process.argv.slice(dash + 1);
const seconds = Number(args.seconds);
const freq = Number(args.freq);
const rate = args.rate ? Number(args.rate) : undefined;
const topFunctions = Number(args.functions);

/** What a process is, from its command line. The first match wins. */
const ROLES = [
  ['Pigeon worker', /cli\.js worker/],
  ['Pigeon API', /cli\.js (start|api)/],
  ['SMTP sink', /smtp-sink\.mjs/],
  ['webhook receiver', /webhook-receiver\.mjs/],
  ['bare baseline', /bench\/baselines\//],
  ['PostgreSQL', /(^|\/)postgres(:| |$)/],
  ['harness', /bench\//],
];

/** What a main-thread sample was in: the first category any of its frames matches. */
const MAIN_CATEGORIES = [
  ['garbage collection', /Scaveng|MarkCompact|Heap::CollectGarbage|PerformGarbageCollection|IncrementalMarking/],
  ['compilation', /compiler::|Compiler::|CompileLazy|Deoptimiz|TranslatedState|Maglev/],
  ['RSA signing', /SignFinal|RSA_sign/],
  ['system calls', /do_syscall_64|entry_SYSCALL|irqentry_exit|asm_sysvec|__schedule/],
  ['pg (client)', /pg-protocol|pg-pool|\/pg\/lib\/|postgres-date|pg-types/],
  ['undici', /\/undici\//],
  ['nodemailer', /nodemailer/],
  ['Pigeon', /packages\/server\/dist\//],
];
const HELPER_CATEGORIES = [
  ['garbage collection', /Marking|Sweep|Scaveng|Heap|Evacuat|Compaction/],
  ['compilation', /compiler::|Compil|Maglev|Turbofan|TurboFan/],
];

/**
 * pid → command line for every process now (one gone by the end is known from the first look), and
 * the working directories seen, where --perf-basic-prof leaves each node's `isolate-…-v8.log`.
 */
function processes(known = new Map(), cwds = new Set([process.cwd()])) {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || known.has(Number(name))) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (cmdline) known.set(Number(name), cmdline);
      cwds.add(readlinkSync(`/proc/${name}/cwd`));
    } catch {}
  }
  return { cmdlines: known, cwds };
}

/** What --perf-basic-prof wrote since `sinceMs`: the JIT maps perf read, and V8's isolate logs. */
function removeProfilerFiles(cwds, sinceMs) {
  const made = (path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs >= sinceMs;
  for (const dir of ['/tmp', ...cwds]) {
    let names = [];
    try {
      names = readdirSync(dir);
    } catch {}
    for (const name of names) {
      const path = join(dir, name);
      if (/^(perf-\d+\.map|isolate-0x[0-9a-f]+-\d+-v8\.log)$/.test(name) && made(path)) rmSync(path, { force: true });
    }
  }
}

function roleOf(pid, cmdlines) {
  if (pid === 0) return 'idle';
  const cmdline = cmdlines.get(pid) ?? '';
  return ROLES.find(([, re]) => re.test(cmdline))?.[0] ?? 'other';
}

/**
 * `perf script` output as samples: { pid, tid, frames (innermost first) }, read as it streams (a
 * window of a minute or more prints more text than one string may hold).
 */
async function* samplesOf(perfData) {
  const perf = spawn('perf', ['script', '-i', perfData, '-F', 'pid,tid,ip,sym'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let lines = [];
  const sample = () => {
    const head = /^\s*(\d+)\/(\d+)/.exec(lines[0] ?? '');
    const frames = lines.slice(1).map((l) => l.trim().replace(/^[0-9a-f]+ /, ''));
    lines = [];
    return head ? { pid: Number(head[1]), tid: Number(head[2]), frames } : undefined;
  };
  for await (const line of createInterface({ input: perf.stdout, crlfDelay: Number.POSITIVE_INFINITY })) {
    if (line.trim()) {
      lines.push(line);
      continue;
    }
    const s = sample();
    if (s) yield s;
  }
  const last = sample();
  if (last) yield last;
  const code = await new Promise((resolve) =>
    perf.exitCode === null ? perf.once('close', resolve) : resolve(perf.exitCode),
  );
  if (code !== 0) throw new Error(`perf script exited with ${code}`);
}

const PIGEON_FRAME = /packages\/server\/dist\//;
/** A frame without its address offset and with a shorter path. */
const frameName = (frame = '?') =>
  frame.replace(/\+0x[0-9a-f]+/, '').replace(/file:\/\/\S*\/(packages|node_modules)\//, '$1/');

const categoryOf = (frames, categories) => categories.find(([, re]) => frames.some((f) => re.test(f)))?.[0] ?? 'other';

function count(map, key, n = 1) {
  map.set(key, (map.get(key) ?? 0) + n);
}

/** The samples with their whole stacks and names (`perf script`), for a closer look than the tables. */
function keepRecording(perfData, file) {
  const out = openSync(file, 'w');
  try {
    execFileSync('perf', ['script', '-i', perfData, '-F', 'comm,pid,tid,ip,sym'], { stdio: ['ignore', out, 'ignore'] });
  } finally {
    closeSync(out);
  }
  console.error(`cpu-split: samples with their stacks in ${file}`);
}

/** Exits with a reason unless `perf` can record every CPU here. */
function requirePerf() {
  try {
    execFileSync('perf', ['record', '-e', 'cpu-clock', '-a', '-o', '/dev/null', '--', 'true'], { stdio: 'ignore' });
  } catch (err) {
    console.error(
      `cpu-split: perf cannot record every CPU here (${err.code ?? err.message}): it needs perf (Debian: linux-perf) ` +
        'and root or kernel.perf_event_paranoid <= 0',
    );
    process.exit(2);
  }
}

async function main() {
  requirePerf();
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-cpu-split-'));
  const perfData = join(dir, 'perf.data');
  const nodeOptions = [process.env.NODE_OPTIONS, '--perf-basic-prof'].filter(Boolean).join(' ');
  const started = Date.now();
  const child = spawn(command[0], command.slice(1), {
    env: { ...process.env, NODE_OPTIONS: nodeOptions },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise((resolve) => setTimeout(resolve, Number(args.after) * 1000));
  const { cmdlines, cwds } = processes();
  console.error(`cpu-split: recording every CPU for ${seconds} s…`);
  execFileSync(
    'perf',
    ['record', '-e', 'cpu-clock', '-F', String(freq), '-a', '-g', '-o', perfData, '--', 'sleep', String(seconds)],
    {
      stdio: ['ignore', 'ignore', 'ignore'],
    },
  );
  processes(cmdlines, cwds);
  const windowAt = (Date.now() - started) / 1000 - seconds;
  const code = await exited;

  const byRole = new Map(); // role → { main, helpers, mainCategories, helperCategories }
  for await (const { pid, tid, frames } of samplesOf(perfData)) {
    const role = roleOf(pid, cmdlines);
    const entry = byRole.get(role) ?? {
      main: 0,
      helpers: 0,
      node: /(^|\/)node /.test(cmdlines.get(pid) ?? ''),
      mainCategories: new Map(),
      helperCategories: new Map(),
      innermost: new Map(),
      pigeonCaller: new Map(),
    };
    byRole.set(role, entry);
    if (pid === tid) {
      entry.main++;
      count(entry.mainCategories, categoryOf(frames, MAIN_CATEGORIES));
      if (topFunctions > 0) {
        count(entry.innermost, frameName(frames[0]));
        count(entry.pigeonCaller, frameName(frames.find((f) => PIGEON_FRAME.test(f)) ?? '(no Pigeon frame)'));
      }
    } else {
      entry.helpers++;
      count(entry.helperCategories, categoryOf(frames, HELPER_CATEGORIES));
    }
  }
  if (args.keep) keepRecording(perfData, args.keep);
  removeProfilerFiles(cwds, started);
  rmSync(dir, { recursive: true, force: true });

  const cores = (samples) => samples / freq / seconds;
  const perUnit = (samples) => (rate ? ` | ${((cores(samples) / rate) * 1000).toFixed(3)}` : '');
  const unitHead = rate ? ' | ms per unit' : '';
  const unitRule = rate ? '|---:' : '';
  const lines = [
    `## CPU by process role (perf, ${seconds} s from ${windowAt.toFixed(0)} s into \`${command.join(' ')}\`)`,
    '',
    `| role | threads | cores${unitHead} |`,
    `|---|---|---:${unitRule}|`,
  ];
  const roles = [...byRole].sort((a, b) => b[1].main + b[1].helpers - (a[1].main + a[1].helpers));
  for (const [role, e] of roles) {
    const rows = e.node
      ? [
          ['main', e.main],
          ['helpers (GC, compiler)', e.helpers],
        ]
      : [['all', e.main + e.helpers]];
    for (const [threads, n] of rows) lines.push(`| ${role} | ${threads} | ${cores(n).toFixed(3)}${perUnit(n)} |`);
  }
  for (const [role, e] of roles) {
    if (!e.node || e.main === 0) continue;
    lines.push('', `### ${role}: main threads, by what the sample was in`, '', `| in | share | cores${unitHead} |`);
    lines.push(`|---|---:|---:${unitRule}|`);
    for (const [category, n] of [...e.mainCategories].sort((a, b) => b[1] - a[1])) {
      lines.push(`| ${category} | ${((100 * n) / e.main).toFixed(1)}% | ${cores(n).toFixed(3)}${perUnit(n)} |`);
    }
    for (const [title, map] of [
      ['innermost frame', e.innermost],
      ["Pigeon's own function nearest the top of the stack", e.pigeonCaller],
    ]) {
      if (map.size === 0) continue;
      lines.push('', `| ${title} | share | cores${unitHead} |`, `|---|---:|---:${unitRule}|`);
      for (const [name, n] of [...map].sort((a, b) => b[1] - a[1]).slice(0, topFunctions)) {
        lines.push(
          `| \`${name.slice(0, 140)}\` | ${((100 * n) / e.main).toFixed(1)}% | ${cores(n).toFixed(3)}${perUnit(n)} |`,
        );
      }
    }
    if (e.helpers > 0) {
      const helpers = [...e.helperCategories].map(([c, n]) => `${c} ${cores(n).toFixed(3)}`).join(', ');
      lines.push('', `Helper threads (cores): ${helpers}.`);
    }
  }
  console.log(lines.join('\n'));
  process.exitCode = code ?? 1;
}

await main();
