// What a customer's `tsc --noEmit` costs with @pigeon/sdk: packs the built SDK (`pnpm pack`, as the SDK
// README's install section says), installs the tarball with npm into an empty project, writes the
// `tsc --init` config of the TypeScript in this repository, and type-checks bench/sdk-typecheck/consumer.ts
// with skipLibCheck true and false, printing tsc's --extendedDiagnostics (time, memory, types,
// instantiations). Build first: `npx -y pnpm@10 --filter @pigeon/contract --filter @pigeon/sdk build`.
//   node bench/sdk-typecheck.mjs [--runs N] [--trace DIR] [--keep]
// Types, instantiations and memory do not depend on the machine's load; the times do (report the load).
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '1' }, trace: { type: 'string' }, keep: { type: 'boolean' } },
});
const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const consumer = mkdtempSync(join(tmpdir(), 'pigeon-sdk-typecheck-'));

try {
  const packDir = join(consumer, 'pack');
  execFileSync('npx', ['-y', 'pnpm@10', 'pack', '--pack-destination', packDir], {
    cwd: join(root, 'packages/sdk'),
    stdio: 'ignore',
  });
  const tarball = join(packDir, readdirSync(packDir).find((f) => f.endsWith('.tgz')) ?? '');
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], {
    cwd: consumer,
    stdio: 'ignore',
  });
  execFileSync(process.execPath, [tsc, '--init'], { cwd: consumer, stdio: 'ignore' });
  mkdirSync(join(consumer, 'src'));
  copyFileSync(join(root, 'bench/sdk-typecheck/consumer.ts'), join(consumer, 'src/consumer.ts'));

  // The same config over a program that does not import the SDK: what TypeScript's own libraries cost.
  const floor = join(consumer, 'floor');
  mkdirSync(join(floor, 'src'), { recursive: true });
  copyFileSync(join(consumer, 'tsconfig.json'), join(floor, 'tsconfig.json'));
  writeFileSync(join(floor, 'package.json'), JSON.stringify({ name: 'floor', private: true, type: 'module' }));
  writeFileSync(join(floor, 'src/main.ts'), 'export const answer: number = 42;\n');
  // Reports the tsc process's CPU time and peak RSS when it exits.
  const probe = join(consumer, 'probe.cjs');
  writeFileSync(
    probe,
    "process.on('exit', () => { const u = process.resourceUsage(); process.stderr.write('probe ' + (u.userCPUTime + u.systemCPUTime) + ' ' + u.maxRSS + '\\n'); });",
  );

  const rows = [];
  for (const [program, cwd] of [
    ['consumer.ts', consumer],
    ['without the SDK', floor],
  ]) {
    for (const skipLibCheck of [true, false]) {
      for (let run = 1; run <= Number(values.runs); run++) {
        const args = ['--require', probe, tsc, '-p', 'tsconfig.json', '--noEmit', '--extendedDiagnostics'];
        args.push('--skipLibCheck', String(skipLibCheck));
        if (values.trace && cwd === consumer)
          args.push('--generateTrace', join(values.trace, `skipLibCheck-${skipLibCheck}`));
        const started = performance.now();
        const result = spawnSync(process.execPath, args, { cwd, encoding: 'utf8' });
        const wall = (performance.now() - started) / 1000;
        const diagnostics = Object.fromEntries(
          [...result.stdout.matchAll(/^([A-Za-z ]+):\s+(\S+)$/gm)].map(([, key, value]) => [key.trim(), value]),
        );
        const [, cpuMicros, maxRssKb] = /probe (\d+) (\d+)/.exec(result.stderr) ?? [];
        const errors = result.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
        if (errors.length)
          console.error(`${program}, skipLibCheck ${skipLibCheck}: ${errors.length} errors\n${errors.join('\n')}`);
        rows.push({
          program,
          skipLibCheck,
          wall: `${wall.toFixed(2)} s`,
          cpu: `${(Number(cpuMicros) / 1e6).toFixed(2)} s`,
          'tsc total': diagnostics['Total time'],
          'tsc check': diagnostics['Check time'],
          'tsc memory': diagnostics['Memory used'],
          'peak RSS': `${Math.round(Number(maxRssKb) / 1024)} MB`,
          types: diagnostics.Types,
          instantiations: diagnostics.Instantiations,
          files: diagnostics.Files,
        });
      }
    }
  }
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on this machine (times grow with it)`,
  );
  console.table(rows);
} finally {
  if (values.keep) console.log(`kept ${consumer}`);
  else rmSync(consumer, { recursive: true, force: true });
}
