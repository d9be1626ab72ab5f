import type { PigeonError } from './errors.js';

export interface BackoffOptions {
  baseDelayMs: number;
  maxDelayMs: number;
}

const MAX_RETRY_AFTER_MS = 60_000;
/** Methods whose repetition could repeat a side effect; retried only with an Idempotency-Key. */
const UNSAFE_METHODS = new Set(['POST', 'PATCH']);

/** Whether a failed attempt may be sent again (the caller checks the attempt budget). */
export function isRetryable(error: PigeonError, method: string, hasIdempotencyKey: boolean): boolean {
  // The rate limiter refuses before any work is done, so a 429 is safe to repeat for every method.
  if (error.status === 429) return true;
  const transient = error.status === 0 || error.status >= 500;
  return transient && (hasIdempotencyKey || !UNSAFE_METHODS.has(method.toUpperCase()));
}

/** Delay before retry number `attempt + 1`: the server's Retry-After if any, else exponential backoff. */
export function retryDelayMs(attempt: number, backoff: BackoffOptions, retryAfter?: string | null): number {
  const fromServer = parseRetryAfter(retryAfter);
  if (fromServer !== undefined) return Math.min(fromServer, MAX_RETRY_AFTER_MS);
  const ceiling = Math.min(backoff.maxDelayMs, backoff.baseDelayMs * 2 ** attempt);
  // "Equal jitter": keeps a floor of half the delay while spreading clients that failed together.
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Retry-After is either delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** setTimeout as a promise that rejects with the signal's reason when aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
