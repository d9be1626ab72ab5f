import { PigeonError } from './errors.js';
import { sleep } from './retry.js';
import type { RequestOptions } from './transport.js';
import type { Job } from './types.js';

export interface WaitForJobOptions {
  /** Which status route to poll: `import` for `contacts.import`, `bulk` for the bulk routes and `deleteField`. */
  kind: 'import' | 'bulk';
  /** Pause between polls, default 1 000 ms. */
  intervalMs?: number;
  /** Give up after this long (rejecting with code `TIMEOUT`), default 600 000 ms (10 minutes); `Infinity` waits forever. */
  timeoutMs?: number;
  /** Called with the job after every poll, including the last one. */
  onProgress?: (job: Job) => void;
}

const DEFAULT_INTERVAL_MS = 1_000;
const DEFAULT_TIMEOUT_MS = 600_000;
/** setTimeout fires at once for delays above 2^31 - 1 ms, so longer timeouts mean "no timeout". */
const MAX_TIMER_MS = 2 ** 31 - 1;

export function isFinished(job: Job): boolean {
  return job.status === 'completed' || job.status === 'failed';
}

/**
 * Polls `poll` until the job is `completed` or `failed` and resolves with that job either way (check
 * `job.status` and `job.error`). Rejects with a PigeonError `TIMEOUT` (status 0, `details.job` is the
 * last job seen) when `timeoutMs` passes first, aborting a poll in flight; with the signal's reason
 * when `options.signal` aborts; or with the error of a failed poll (after its own retries).
 */
export function waitForJob(
  poll: (options: RequestOptions) => Promise<Job>,
  jobId: string,
  wait: WaitForJobOptions,
  options: RequestOptions = {},
): Promise<Job> {
  return pollUntil(poll, isFinished, wait, options, (last) => ({
    message: `Job ${jobId} did not finish within ${wait.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms${last ? ` (last status: ${last.status})` : ''}`,
    details: { jobId, job: last },
  }));
}

/** How often and how long to poll, and what to call after every poll. */
export interface PollOptions<T> {
  intervalMs?: number;
  timeoutMs?: number;
  onProgress?: (value: T) => void;
}

/**
 * Polls until `done` says so, calling `onProgress` after every poll (the last one too). Rejects with
 * a PigeonError `TIMEOUT` (status 0) described by `timedOut` when `timeoutMs` passes first, aborting a
 * poll in flight; with the signal's reason when `options.signal` aborts; or with a poll's error.
 */
export async function pollUntil<T>(
  poll: (options: RequestOptions) => Promise<T>,
  done: (value: T) => boolean,
  wait: PollOptions<T>,
  options: RequestOptions,
  timedOut: (last: T | undefined) => { message: string; details: Record<string, unknown> },
): Promise<T> {
  const { signal } = options;
  signal?.throwIfAborted();
  const intervalMs = Math.max(0, wait.intervalMs ?? DEFAULT_INTERVAL_MS);
  const timeoutMs = wait.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const controller = new AbortController();
  let last: T | undefined;
  const timer =
    timeoutMs <= MAX_TIMER_MS
      ? setTimeout(
          () => controller.abort(new PigeonError({ status: 0, code: 'TIMEOUT', ...timedOut(last) })),
          timeoutMs,
        )
      : undefined;
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const value = await poll({ ...options, signal: controller.signal });
      last = value;
      wait.onProgress?.(value);
      if (done(value)) return value;
      await sleep(intervalMs, controller.signal);
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
