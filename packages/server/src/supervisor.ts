import { type ChildProcess, fork } from 'node:child_process';
import { inheritedEnvironment, workerEnvironment } from './config/index.js';
import type { AppDeps } from './deps.js';
import type { Logger } from './logger.js';
import { workerRestarts } from './metrics/registry.js';

/** What a supervised worker sends its parent once its loops run. */
export const WORKER_READY = 'pigeon:worker-ready';

export interface SupervisorOptions {
  /** What the processes are, in log lines ("worker process started", with `worker: <slot>`). */
  kind?: 'worker' | 'api';
  /** Processes kept running. */
  count: number;
  /** The script each worker runs, and its arguments (followed by `--slot <n>`, the worker's number from 1). */
  modulePath: string;
  args: string[];
  /** Node's own flags for each worker, after this process's (`--cpu-prof` and the like are inherited). */
  execArgv?: string[];
  env: Record<string, string>;
  logger: Logger;
  /** How long `stop()` waits for the workers after SIGTERM before it SIGKILLs them. */
  shutdownTimeoutMs: number;
  /** First restart delay after an unexpected exit; doubles with each crash in a row. */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
  /** A worker that ran at least this long before it died starts again from `restartDelayMs`. */
  stableAfterMs?: number;
  /**
   * Called instead of a restart when a process exits before it ever reported ready (a start that
   * fails, such as a port in use, would fail again): the supervisor then stops the rest.
   */
  onFailedStart?: (code: number | null, signal: NodeJS.Signals | null) => void;
}

export interface Supervisor {
  /** The pids of the worker processes running now. */
  pids: () => number[];
  /** The worker processes running now (their IPC channels carry metrics requests). */
  children: () => ChildProcess[];
  /** SIGTERM to every worker, wait (bounded), SIGKILL what is left; nothing is restarted after. */
  stop: () => Promise<void>;
}

interface Slot {
  index: number;
  child?: ChildProcess;
  exited?: Promise<void>;
  restart?: NodeJS.Timeout;
  crashes: number;
}

/** This process's Node flags (`--cpu-prof` and the like) with `own` after them, replacing any of the same name. */
function inheritedFlags(own: string[]): string[] {
  const name = (flag: string) => flag.split('=', 1)[0];
  const replaced = new Set(own.map(name));
  return [...process.execArgv.filter((flag) => !replaced.has(name(flag))), ...own];
}

/**
 * Forks `count` worker processes (node:child_process, with an IPC channel: a worker exits when it
 * closes, so none outlives this process) and restarts any that exits while not being stopped.
 */
export function superviseWorkers(opts: SupervisorOptions): Supervisor {
  const { logger } = opts;
  const kind = opts.kind ?? 'worker';
  const baseDelay = opts.restartDelayMs ?? 500;
  const maxDelay = opts.maxRestartDelayMs ?? 30_000;
  const stableAfter = opts.stableAfterMs ?? 60_000;
  let stopping = false;

  const start = (slot: Slot) => {
    const startedAt = Date.now();
    const child = fork(opts.modulePath, [...opts.args, '--slot', String(slot.index)], {
      env: opts.env,
      execArgv: inheritedFlags(opts.execArgv ?? []),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const pid = child.pid;
    slot.child = child;
    let gone = false;
    let ready = false;
    let onGone: () => void = () => {};
    slot.exited = new Promise((resolve) => {
      onGone = resolve;
    });
    const ended = (code: number | null, signal: NodeJS.Signals | null) => {
      if (gone) return;
      gone = true;
      slot.child = undefined;
      onGone();
      if (stopping) {
        logger.info({ [kind]: slot.index, pid, code, signal }, `${kind} process stopped`);
        return;
      }
      if (!ready && opts.onFailedStart) {
        logger.error({ [kind]: slot.index, pid, code, signal }, `${kind} process exited before it was ready`);
        opts.onFailedStart(code, signal);
        return;
      }
      if (Date.now() - startedAt >= stableAfter) slot.crashes = 0;
      const restartInMs = Math.min(maxDelay, baseDelay * 2 ** slot.crashes);
      slot.crashes += 1;
      workerRestarts.inc();
      logger.error({ [kind]: slot.index, pid, code, signal, restartInMs }, `${kind} process exited; restarting it`);
      slot.restart = setTimeout(() => {
        slot.restart = undefined;
        if (!stopping) start(slot);
      }, restartInMs);
    };
    child.once('exit', ended);
    child.on('error', (err) => {
      logger.error({ err, [kind]: slot.index, pid }, `${kind} process error`);
      if (child.pid === undefined) ended(null, null); // never spawned, so no 'exit' will follow
    });
    child.on('message', (message) => {
      if ((message as { type?: string } | null)?.type === WORKER_READY) {
        ready = true;
        logger.info({ [kind]: slot.index, pid }, `${kind} process ready`);
      }
    });
    if (pid !== undefined) logger.info({ [kind]: slot.index, pid }, `${kind} process started`);
  };

  const slots: Slot[] = Array.from({ length: opts.count }, (_, i) => ({ index: i + 1, crashes: 0 }));
  for (const slot of slots) start(slot);

  const stopSlot = async (slot: Slot) => {
    const { child, exited } = slot;
    if (!child || !exited) return;
    child.kill('SIGTERM');
    const force = setTimeout(() => {
      logger.warn({ [kind]: slot.index, pid: child.pid }, `${kind} process did not stop in time; killing it`);
      child.kill('SIGKILL');
    }, opts.shutdownTimeoutMs);
    await exited;
    clearTimeout(force);
  };

  return {
    pids: () => slots.flatMap((slot) => (slot.child?.pid === undefined ? [] : [slot.child.pid])),
    children: () => slots.flatMap((slot) => (slot.child ? [slot.child] : [])),
    stop: async () => {
      stopping = true;
      for (const slot of slots) clearTimeout(slot.restart);
      await Promise.all(slots.map(stopSlot));
    },
  };
}

/**
 * `pigeon start`: `config.workerProcesses` processes running `pigeon worker` on the database this
 * (API) process opened, with its secrets and public URL. Their old generation is capped
 * (`WORKER_MAX_OLD_SPACE_MB`): a worker's live heap is small (claimed batches, cached campaign
 * content), but left to itself V8 let one started under full load grow to 268 MB before it
 * collected (a 100k campaign with a worker killed and restarted midway).
 */
export async function forkWorkerProcesses(deps: AppDeps, cliPath: string): Promise<Supervisor> {
  const { config } = deps;
  return superviseWorkers({
    count: config.workerProcesses,
    modulePath: cliPath,
    args: ['worker', '--supervised'],
    execArgv: config.workerMaxOldSpaceMb ? [`--max-old-space-size=${config.workerMaxOldSpaceMb}`] : [],
    env: workerEnvironment(config, deps.db.url),
    logger: deps.logger,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
  });
}

/**
 * `pigeon start` and `pigeon api`: the API runs in a process of its own under this small one, with
 * its old generation capped (`API_MAX_OLD_SPACE_MB`), so that a heap that runs out ends one process
 * that is started again, never the machine. The API process stops when this one dies (its IPC
 * channel closes), and its worker processes with it; this one holds no database and no sockets.
 * A start that fails (before the API is ready) is not repeated: its exit code becomes this one's.
 */
export function launchApiProcess(opts: {
  cliPath: string;
  args: string[];
  maxOldSpaceMb: number;
  logger: Logger;
  shutdownTimeoutMs: number;
}): void {
  let exitCode = 0;
  const supervisor = superviseWorkers({
    kind: 'api',
    count: 1,
    modulePath: opts.cliPath,
    args: [...opts.args, '--supervised'],
    execArgv: opts.maxOldSpaceMb ? [`--max-old-space-size=${opts.maxOldSpaceMb}`] : [],
    env: inheritedEnvironment(),
    logger: opts.logger,
    // The API process drains requests and stops its workers in this time itself; the margin is its own.
    shutdownTimeoutMs: opts.shutdownTimeoutMs + 10_000,
    onFailedStart: (code) => {
      exitCode = code || 1;
      void stop();
    },
  });
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= supervisor.stop().then(() => process.exit(exitCode));
    return stopping;
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}
