/**
 * When a failed delivery is tried again: the Svix schedule (immediately, 5 s, 5 min, 30 min, 2 h,
 * 5 h, 10 h, 10 h) continued by two 20 h waits, so the last of the 10 attempts comes about
 * 2.8 days after the first (Standard Webhooks asks for retries over ~3 days). Each wait is
 * jittered by ±10% so that the retries of a burst spread out.
 */
export const RETRY_DELAYS_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
  20 * 3_600_000,
  20 * 3_600_000,
] as const;

/** Attempts of one delivery, the first included. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** An endpoint whose attempts have all failed for this long (no success in between) is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3_600_000;

/** The wait after failed attempt number `attempt` (1-based), or null when it was the last. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (0.9 + 0.2 * random()));
}
