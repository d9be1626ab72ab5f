// What survives a track load in the API process: a heap snapshot after a warm-up, another after
// a load of POST /v1/track, then `heap-summary.mjs AFTER --since BEFORE` (objects allocated during
// the load and still alive after the full collection a snapshot starts with).
//
//   node bench/memory/load-snapshots.mjs [--seconds 10] [--connections 50] [--keyed] [--out DIR] [--dist DIR]
//
// `--keyed` sends an Idempotency-Key with every track, as the SDK does.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { readFirstRun } from '../lib/pigeon.mjs';
import { peakRssMb, rssMb } from '../lib/process.mjs';
import { trackBodies } from '../scenarios/track.mjs';
import { DEFAULT_DIST, freshSite, heapSnapshot, sleep, startApi } from './lib.mjs';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    keyed: { type: 'boolean', default: false },
    out: { type: 'string', default: '/tmp' },
    dist: { type: 'string', default: DEFAULT_DIST },
  },
});
mkdirSync(args.out, { recursive: true });

function load(site, seconds) {
  const { publicKey } = readFirstRun(site.dataDir);
  const next = trackBodies(`snap${Date.now()}`);
  return new Promise((resolve, reject) =>
    autocannon(
      {
        url: `http://127.0.0.1:${site.port}`,
        connections: Number(args.connections),
        duration: seconds,
        requests: [
          {
            method: 'POST',
            path: '/v1/track',
            headers: { authorization: `Bearer ${publicKey}`, 'content-type': 'application/json' },
            setupRequest: (req) => ({
              ...req,
              body: next(),
              headers: args.keyed ? { ...req.headers, 'idempotency-key': randomUUID() } : req.headers,
            }),
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    ),
  );
}

const site = await freshSite();
const api = await startApi(site, { dist: args.dist, nodeArgs: ['--heapsnapshot-signal=SIGUSR2'] });
try {
  await load(site, 3);
  await sleep(2000);
  const before = await heapSnapshot(api.pid, join(args.out, 'api-before-load.heapsnapshot'));
  const rssBefore = rssMb(api.pid);
  const result = await load(site, Number(args.seconds));
  const peak = peakRssMb(api.pid);
  await sleep(2000);
  const after = await heapSnapshot(api.pid, join(args.out, 'api-after-load.heapsnapshot'));
  console.log(
    `track load: ${result.requests.total} requests (${Math.round(result.requests.average)} req/s, ` +
      `${result.non2xx} non-2xx); API RSS ${rssBefore} MB before, peak ${peak} MB (VmHWM over the whole run), ` +
      `${rssMb(api.pid)} MB after`,
  );
  const summary = fileURLToPath(new URL('./heap-summary.mjs', import.meta.url));
  console.log(execFileSync(process.execPath, [summary, after, '--since', before, '--top', '30'], { encoding: 'utf8' }));
} finally {
  await api.stop();
  site.remove();
}
