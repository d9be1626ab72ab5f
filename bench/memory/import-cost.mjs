// What each npm package the API process loads costs at import, at idle.
//
//   node bench/memory/import-cost.mjs [--json]
//
// 1. A child process loads the API process's code (the built server: `dist/cli.js` as for `--help`,
//    then the HTTP stack main.ts imports at start) with module hooks that record every npm package
//    the bundle imports, in first-resolve order.
// 2. A fresh `node --expose-gc` imports those packages one after another in that order, then
//    Pigeon's own bundle, and prints RSS, V8 heap used and external memory after each, measured
//    after two forced collections. Later packages share what earlier ones loaded (a package's row
//    is what it added on top of everything above it).
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST = join(ROOT, 'packages/server/dist');

/** The files the API process of `pigeon start` loads: cli.js (static graph), then the HTTP stack. */
export function apiEntryFiles() {
  const lazy = readdirSync(DIST).filter((f) => /^(app|fast-routes)-[A-Z0-9]+\.js$/.test(f));
  return [join(DIST, 'cli.js'), ...lazy.map((f) => join(DIST, f))];
}

async function loadApiCode() {
  const argv = process.argv;
  const log = console.log;
  process.argv = [argv[0], join(DIST, 'cli.js'), '--help'];
  console.log = () => {};
  for (const file of apiEntryFiles()) await import(pathToFileURL(file).href);
  await new Promise((r) => setTimeout(r, 50));
  console.log = log;
  process.argv = argv;
}

async function trace() {
  const { register } = await import('node:module');
  const { MessageChannel } = await import('node:worker_threads');
  const { port1, port2 } = new MessageChannel();
  const packages = [];
  port1.on('message', (m) => packages.push(m));
  register(new URL('./trace-hooks.mjs', import.meta.url), {
    data: { port: port2, serverDist: pathToFileURL(DIST).href },
    transferList: [port2],
  });
  await loadApiCode();
  await new Promise((r) => setTimeout(r, 100));
  port1.close();
  process.stdout.write(JSON.stringify(packages));
  process.exit(0);
}

function sample() {
  globalThis.gc();
  globalThis.gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external + m.arrayBuffers };
}

async function measure(packages) {
  const rows = [];
  let last = sample();
  rows.push({
    name: 'node (nothing imported)',
    ...last,
    delta: { rss: last.rss, heapUsed: last.heapUsed, external: last.external },
  });
  const record = (name, extra = {}) => {
    const now = sample();
    rows.push({
      name,
      ...extra,
      ...now,
      delta: {
        rss: now.rss - last.rss,
        heapUsed: now.heapUsed - last.heapUsed,
        external: now.external - last.external,
      },
    });
    last = now;
  };
  for (const { specifier, url } of packages) {
    try {
      await import(url);
      record(specifier);
    } catch (err) {
      record(specifier, { error: String(err.message ?? err).split('\n')[0] });
    }
  }
  await loadApiCode();
  record("Pigeon's bundle (server code + contract, its schemas and routers built)");
  process.stdout.write(JSON.stringify(rows));
  process.exit(0);
}

const mode = process.argv[2];
const direct = process.argv[1] === fileURLToPath(import.meta.url);
if (!direct) {
  // imported for apiEntryFiles()
} else if (mode === '--trace') await trace();
else if (mode === '--measure') await measure(JSON.parse(process.argv[3]));
else {
  const self = fileURLToPath(import.meta.url);
  const packages = JSON.parse(execFileSync(process.execPath, [self, '--trace'], { encoding: 'utf8' }));
  const rows = JSON.parse(
    execFileSync(process.execPath, ['--expose-gc', self, '--measure', JSON.stringify(packages)], {
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    }),
  );
  if (process.argv.includes('--json')) console.log(JSON.stringify(rows, null, 2));
  else {
    const mb = (b) => (b / 1048576).toFixed(1);
    console.log('| import (in load order) | +RSS MB | +heap used MB | +external MB | RSS after |');
    console.log('|---|---:|---:|---:|---:|');
    for (const r of rows) {
      const name = r.error ? `${r.name} (failed: ${r.error})` : r.name;
      console.log(
        `| ${name} | ${mb(r.delta.rss)} | ${mb(r.delta.heapUsed)} | ${mb(r.delta.external)} | ${mb(r.rss)} |`,
      );
    }
  }
}
