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
