export type WebhookOutcome = 'success' | 'retryable' | 'permanent';

/** Attempts of one delivery, the first included. With the delays below they span about 15 hours. */
export const WEBHOOK_MAX_ATTEMPTS = 8;
const FIRST_DELAY_MS = 30_000;
const GROWTH = 4;
export const WEBHOOK_MAX_DELAY_MS = 6 * 60 * 60 * 1000;

/** 2xx succeeded; 5xx, 429 and 408 may succeed later; anything else will not. */
export function classifyStatus(status: number): WebhookOutcome {
  if (status >= 200 && status <= 299) return 'success';
  if ((status >= 500 && status <= 599) || status === 429 || status === 408) return 'retryable';
  return 'permanent';
}

/**
 * How long to wait after failed attempt number `attempt` (1-based) before the next one:
 * 30 s, 2 min, 8 min, 32 min, ~2 h, then 6 h, each ±10% so that retries of many deliveries
 * spread out. A receiver's `Retry-After` is honoured when longer. Never more than 6 h.
 */
export function webhookRetryDelayMs(attempt: number, retryAfterMs: number | null = null, random = Math.random): number {
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  const base = Math.min(WEBHOOK_MAX_DELAY_MS, FIRST_DELAY_MS * GROWTH ** exponent);
  const jittered = Math.round(base * (0.9 + 0.2 * random()));
  return Math.min(WEBHOOK_MAX_DELAY_MS, Math.max(jittered, retryAfterMs ?? 0));
}

/** `Retry-After` as milliseconds from `now` (delta seconds or an HTTP date), or null. */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}
