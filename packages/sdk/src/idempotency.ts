import type { PigeonError } from './errors.js';

/** Options of methods that accept an `Idempotency-Key` (e.g. `events.track`, `emails.send`). */
export interface IdempotencyOptions {
  /** 1–255 printable ASCII characters. When omitted the SDK generates one per call. */
  idempotencyKey?: string;
}

/** A fresh random key (UUID v4) suitable for the `Idempotency-Key` header. */
export function generateIdempotencyKey(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  // Browsers expose randomUUID only in secure contexts; getRandomValues works everywhere.
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
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
