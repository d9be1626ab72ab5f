// Time from the README's start command to the first answered request (GET /health).
//   node bench/start-time.mjs [runs] [-- command …]   (default: npx -y pnpm@10 start)
// Each run uses its own data directory, port and embedded PostgreSQL port under /tmp, reused across the
// runs (so the first run is a first start and the others are second starts), and stops Pigeon after.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const dash = args.indexOf('--');
const runs = Number(args[0] && args[0] !== '--' ? args[0] : 3);
const command = dash >= 0 ? args.slice(dash + 1) : ['npx', '-y', 'pnpm@10', 'start'];
const dataDir = mkdtempSync(join(tmpdir(), 'pigeon-start-'));
const port = 3900 + (process.pid % 90);
const env = {
  ...process.env,
  PORT: String(port),
  PIGEON_DATA_DIR: dataDir,
  EMBEDDED_POSTGRES_PORT: String(port + 50000),
};

async function once() {
  const started = performance.now();
  const child = spawn(command[0], command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`exited before answering:\n${output}`);
      const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
      if (res?.ok) return (performance.now() - started) / 1000;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    process.kill(-child.pid, 'SIGTERM');
    await exited;
    // npx may exit before the server it started has stopped: wait until nothing answers any more.
    while (
      await fetch(`http://127.0.0.1:${port}/health`).then(
        () => true,
        () => false,
      )
    ) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 1000)); // the embedded PostgreSQL stops after the HTTP server
  }
}

try {
  for (let i = 1; i <= runs; i++)
    console.log(
      `run ${i}${i === 1 ? ' (first start of this data dir)' : ''}: ${(await once()).toFixed(2)} s to the first answered request`,
    );
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
