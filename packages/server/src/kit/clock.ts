/**
 * The time of decisions (expiry, schedules, rate windows, time stamps written to rows): one clock,
 * carried in `deps.clock`, so a test can move it. Elapsed-time measurements (durations for logs and
 * metrics, waits, pacing) read `performance.now()` or `Date.now()` directly (CONTRIBUTING.md "Time").
 */
export interface Clock {
  now(): Date;
  nowMs(): number;
}

/** The machine's clock. */
export const systemClock: Clock = {
  now: () => new Date(),
  nowMs: () => Date.now(),
};

/** A clock that reads `now` (a test's moved time). */
export const clockOf = (now: () => Date): Clock => ({ now, nowMs: () => now().getTime() });
