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
import { parseArgs } from 'node:util';
import { rssMb } from '../lib/process.mjs';
import { DEFAULT_DIST, freshSite, heapSnapshot, sleep, startApi } from './lib.mjs';

const { values: args } = parseArgs({
  options: {
    dist: { type: 'string', default: DEFAULT_DIST },
    settle: { type: 'string', default: '30' },
    restart: { type: 'boolean', default: false },
    snapshot: { type: 'string' },
    'node-option': { type: 'string', multiple: true, default: [] },
  },
});
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

async function measureOnce(site, label) {
  const nodeArgs = [...args['node-option']];
  if (args.snapshot) nodeArgs.push('--heapsnapshot-signal=SIGUSR2');
  const pigeon = await startApi(site, { dist: args.dist, nodeArgs });
  try {
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
    if (args.snapshot) {
      await heapSnapshot(pigeon.pid, args.snapshot);
      console.error(`heap snapshot of the API process written to ${args.snapshot}`);
    }
    return row;
  } finally {
    await pigeon.stop();
  }
}

const site = await freshSite();
try {
  const rows = [await measureOnce(site, 'first start')];
  if (args.restart) rows.push(await measureOnce(site, 'second start'));
  console.log(
    JSON.stringify({ dist: args.dist, settleSeconds: Number(args.settle), nodeOptions: args['node-option'], rows }),
  );
} finally {
  site.remove();
}
