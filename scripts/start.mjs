// `pnpm start`: build the server and the console only when their inputs changed since the last build,
// then start Pigeon.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const server = join(root, 'packages/server');
const consolePackage = join(root, 'packages/console');

/**
 * What `pnpm start` builds, each only when its inputs changed since its last build (a hash of them
 * is kept beside the output): the server bundle (it bundles the contract from source) and the
 * console (Vite, with the SDK from source). Tests are not inputs. `pnpm build` still builds every
 * package in full (declarations, the SDK).
 */
const BUILDS = [
  {
    name: 'server',
    stamp: join(server, 'dist/.inputs-hash'),
    output: join(server, 'dist/cli.js'),
    inputs: [
      'packages/server/src',
      'packages/contract/src',
      'packages/server/package.json',
      'packages/server/tsup.config.ts',
      'packages/contract/package.json',
      'pnpm-lock.yaml',
    ],
    run: () =>
      spawnSync(process.execPath, [join(root, 'node_modules/tsup/dist/cli-default.js'), '--silent'], {
        cwd: server,
        stdio: 'inherit',
      }),
  },
  {
    name: 'console',
    stamp: join(consolePackage, 'dist/.inputs-hash'),
    output: join(consolePackage, 'dist/index.html'),
    inputs: [
      'packages/console/src',
      'packages/console/index.html',
      'packages/console/vite.config.ts',
      'packages/console/package.json',
      'packages/sdk/src',
      'packages/contract/src',
      'pnpm-lock.yaml',
    ],
    run: () =>
      spawnSync(
        process.execPath,
        [join(consolePackage, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'],
        {
          cwd: consolePackage,
          stdio: 'inherit',
        },
      ),
  },
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

function inputsHash(inputs) {
  const hash = createHash('sha256');
  for (const input of inputs) {
    for (const file of files(join(root, input))) hash.update(`${relative(root, file)}\0`).update(readFileSync(file));
  }
  return hash.digest('hex');
}

for (const build of BUILDS) {
  const started = Date.now();
  const current = inputsHash(build.inputs);
  const built = existsSync(build.output) && existsSync(build.stamp) && readFileSync(build.stamp, 'utf8') === current;
  if (built) {
    console.log(`${build.name} build is up to date (${Date.now() - started} ms to check)`);
    continue;
  }
  console.log(`building the ${build.name} (its sources changed since the last build)…`);
  const result = build.run();
  if (result.status !== 0) process.exit(result.status ?? 1);
  writeFileSync(build.stamp, current);
  console.log(`${build.name} built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

// In this process, as `node packages/server/dist/cli.js start …` would run (worker processes are forked
// from argv[1]): no second Node start-up, and signals reach the server directly.
const cli = join(server, 'dist/cli.js');
process.argv = [process.argv[0], cli, 'start', ...process.argv.slice(2)];
await import(pathToFileURL(cli).href);
