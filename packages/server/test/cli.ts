import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TEST_SHARED_SECRETS } from './helpers.js';

export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `pigeon` command to completion. */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => (stdout += d));
    child.stderr?.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`pigeon ${args.join(' ')} timed out:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const running = new Set<ChildProcess>();

export function spawnCli(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...TEST_SHARED_SECRETS, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.on('exit', () => running.delete(child));
  return child;
}

/** Stops every `pigeon` process a test started and did not stop itself (e.g. after a failure). */
export async function killAllCli(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
        }),
    ),
  );
}

/** Starts `pigeon <role>` and resolves once it prints its listening line. */
export function startCli(args: string[], env: Record<string, string>, timeoutMs = 60_000) {
  const child = spawnCli(args, env);
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pigeon did not start:\n${output}`)), timeoutMs);
    const onData = (d: Buffer) => {
      output += d;
      const match = output.match(/listening on (http:\/\/\S+)|worker is running/);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] ?? '');
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (d) => (output += d));
    child.on('exit', () => reject(new Error(`pigeon exited before it was ready:\n${output}`)));
  });
  return { child, ready, exited, output: () => output };
}
