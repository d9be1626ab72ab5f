// Idle resident memory of `pigeon start`: the API process and each worker process, sampled once
// start-up has settled.
//
//   node bench/memory/idle-rss.mjs [--dist DIR] [--settle S] [--restart] [--snapshot FILE]
//                                  [--node-option FLAG]…
//
// Starts `node DIR/cli.js start` (DIR defaults to this checkout's packages/server/dist) on a fresh
// data dir with the bench's environment, waits until GET /health answers, then `--settle` seconds
// (default 30), then reads VmRSS of the API process and its node children every second for 5 s
// and prints the medians. `--restart` stops it and measures a second start on the same data dir
// (no migration pending). `--snapshot FILE` also writes the API process's heap snapshot
// (`--heapsnapshot-signal`) at the end and moves it to FILE.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pigeonEnvironment, stopLeftoverPostgres } from '../lib/pigeon.mjs';
import { freePort, rssMb, startNode } from '../lib/process.mjs';

const { values: args } = parseArgs({
  options: {
    dist: { type: 'string', default: new URL('../../packages/server/dist', import.meta.url).pathname },
    settle: { type: 'string', default: '30' },
    restart: { type: 'boolean', default: false },
    snapshot: { type: 'string' },
    'node-option': { type: 'string', multiple: true, default: [] },
  },
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function nodeChildren(pid) {
  try {
    return execFileSync('pgrep', ['-P', String(pid), '-f', 'cli.js'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

async function measureOnce(dataDir, port, pgPort, label) {
  const env = pigeonEnvironment({ port, pgPort, dataDir, rateLimitPerMinute: 1_000_000 });
  const nodeArgs = [...args['node-option']];
  if (args.snapshot) nodeArgs.push('--heapsnapshot-signal=SIGUSR2');
  const pigeon = startNode({
    name: 'Pigeon',
    args: [...nodeArgs, join(resolve(args.dist), 'cli.js'), 'start'],
    env,
    ready: /Pigeon is listening on/,
  });
  try {
    await pigeon.ready;
    for (;;) {
      const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
      if (res?.ok) break;
      await sleep(200);
    }
    await sleep(Number(args.settle) * 1000);
    const api = [];
    const workers = new Map();
    for (let i = 0; i < 5; i++) {
      api.push(rssMb(pigeon.pid));
      for (const child of nodeChildren(pigeon.pid)) {
        workers.set(child, [...(workers.get(child) ?? []), rssMb(child)]);
      }
      await sleep(1000);
    }
    const row = {
      label,
      apiRssMb: Math.round(median(api)),
      workerRssMb: [...workers.values()].map((xs) => Math.round(median(xs.filter(Boolean)))),
    };
    if (args.snapshot) await writeSnapshot(pigeon.pid, dataDir);
    return row;
  } finally {
    await pigeon.stop();
    await stopLeftoverPostgres(dataDir);
  }
}

async function writeSnapshot(pid, dataDir) {
  const cwd = process.cwd();
  const before = new Set(readdirSync(cwd));
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 600; i++) {
    await sleep(500);
    const file = readdirSync(cwd).find((f) => !before.has(f) && f.endsWith('.heapsnapshot') && f.includes(`.${pid}.`));
    if (!file) continue;
    const size = statSync(join(cwd, file)).size;
    await sleep(1500);
    if (statSync(join(cwd, file)).size !== size) continue;
    renameSync(join(cwd, file), args.snapshot);
    console.error(`heap snapshot of pid ${pid} (data dir ${dataDir}) written to ${args.snapshot}`);
    return;
  }
  throw new Error('no heap snapshot written');
}

const dataDir = mkdtempSync(join(os.tmpdir(), 'pigeon-idle-'));
chmodSync(dataDir, 0o711);
const [port, pgPort] = [await freePort(), await freePort()];
try {
  const rows = [await measureOnce(dataDir, port, pgPort, 'first start')];
  if (args.restart) rows.push(await measureOnce(dataDir, port, pgPort, 'second start'));
  console.log(
    JSON.stringify({ dist: args.dist, settleSeconds: Number(args.settle), nodeOptions: args['node-option'], rows }),
  );
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
