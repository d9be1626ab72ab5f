// `pnpm start`: build the server only when its inputs changed since the last build, then start it.
// The server bundles the contract from source (packages/server/tsup.config.ts), so nothing else is
// built on the way: no declaration files, no SDK. `pnpm build` still builds every package in full.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const server = join(root, 'packages/server');
const stamp = join(server, 'dist/.inputs-hash');

/** Everything the server's bundle is made from. Tests are not. */
const INPUTS = [
  'packages/server/src',
  'packages/contract/src',
  'packages/server/package.json',
  'packages/server/tsup.config.ts',
  'packages/contract/package.json',
  'pnpm-lock.yaml',
];

function* files(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return;
  if (stat.isFile()) {
    if (!path.endsWith('.test.ts')) yield path;
    return;
  }
  for (const entry of readdirSync(path).sort()) yield* files(join(path, entry));
}

function inputsHash() {
  const hash = createHash('sha256');
  for (const input of INPUTS) {
    for (const file of files(join(root, input))) hash.update(`${relative(root, file)}\0`).update(readFileSync(file));
  }
  return hash.digest('hex');
}

const started = Date.now();
const current = inputsHash();
const built = existsSync(join(server, 'dist/cli.js')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === current;
if (built) {
  console.log(`server build is up to date (${Date.now() - started} ms to check)`);
} else {
  console.log('building the server (its sources changed since the last build)…');
  const tsup = join(root, 'node_modules/tsup/dist/cli-default.js');
  const result = spawnSync(process.execPath, [tsup, '--silent'], { cwd: server, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
  writeFileSync(stamp, current);
  console.log(`server built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

// In this process, as `node packages/server/dist/cli.js start …` would run (worker processes are forked
// from argv[1]): no second Node start-up, and signals reach the server directly.
const cli = join(server, 'dist/cli.js');
process.argv = [process.argv[0], cli, 'start', ...process.argv.slice(2)];
await import(pathToFileURL(cli).href);
