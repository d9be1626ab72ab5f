import { uuidv7 } from 'uuidv7';
import type { PigeonError } from './errors.js';

/** Options of methods that accept an `Idempotency-Key` (e.g. `events.track`, `emails.send`). */
export interface IdempotencyOptions {
  /** 1–255 printable ASCII characters. When omitted the SDK generates one per call. */
  idempotencyKey?: string;
}

/**
 * A fresh key for the `Idempotency-Key` header: a UUID version 7 (a millisecond timestamp, then 74
 * random bits). Keys made in time order land at the right edge of the server's key index instead of
 * on a random page of it, which made a keyed track cost PostgreSQL ~7 µs more than a plain one
 * rather than ~18 µs (bench/results/2026-11-28-twentieth-sitting.md).
 */
export function generateIdempotencyKey(): string {
  return uuidv7();
}

/**
 * For methods that opt in: fixes the key once per method call, so every retry of that call sends
 * the same key and the server performs the operation at most once.
 */
export function withIdempotencyKey<T extends IdempotencyOptions>(options?: T): T & { idempotencyKey: string } {
  return { ...(options as T), idempotencyKey: options?.idempotencyKey ?? generateIdempotencyKey() };
}

/**
 * The first response to `key`, when `error` is the server's 409 IDEMPOTENCY_KEY_REUSED for it and
 * that first request succeeded (`details.originalResponse`). The transport returns it when a retry
 * of its own call meets the 409, i.e. when the first attempt's response was lost after the server
 * acted. A first request that failed or is still running has no `originalResponse`: the 409 stands.
 */
export function originalResponse(error: PigeonError, key: string): { body: unknown } | undefined {
  if (error.status !== 409 || error.code !== 'IDEMPOTENCY_KEY_REUSED') return undefined;
  const details = error.details;
  if (details?.key !== key || !('originalResponse' in details)) return undefined;
  const status = details.originalStatusCode;
  if (typeof status !== 'number' || status < 200 || status >= 300) return undefined;
  return { body: details.originalResponse };
}
