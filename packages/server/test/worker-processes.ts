import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAllCli, startCli } from './cli.js';

export type WorkerProcess = ReturnType<typeof startCli>;

/**
 * Real `pigeon worker` processes on one test database, each with a data dir of its own (the env
 * of `start` on top of `base`); `stopAll` ends the ones still running and removes the dirs.
 */
export function workerProcesses(base: Record<string, string>) {
  const dirs: string[] = [];
  return {
    start(env: Record<string, string> = {}): WorkerProcess {
      const dir = mkdtempSync(join(tmpdir(), 'pigeon-worker-'));
      chmodSync(dir, 0o755);
      dirs.push(dir);
      return startCli(['worker'], { PIGEON_DATA_DIR: dir, ...base, ...env });
    },
    async stopAll() {
      await killAllCli();
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** kill -9: the process gets no chance to release or record anything. */
export async function killHard(worker: WorkerProcess): Promise<void> {
  worker.child.kill('SIGKILL');
  await worker.exited;
}

/** SIGTERM, and the exit code of its graceful stop. */
export async function stopGracefully(worker: WorkerProcess): Promise<number | null> {
  worker.child.kill('SIGTERM');
  return worker.exited;
}
