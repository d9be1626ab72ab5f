import type { GovernorConfig } from './config.js';

/** A deferral lowers the rate at most this often: the replies of one burst are one signal. */
const DECREASE_EVERY_MS = 1000;
/** Admissions within this much of their slot pass at once, so a group at its rate sends in short bursts. */
const TOLERANCE_MS = 1000;
/** Growth counts at most this much time per success, so an idle group does not leap when mail comes back. */
const MAX_GROWTH_STEP_MS = 1000;

/**
 * One destination group's rate in one process: AIMD over a GCRA schedule. A message passes when the
 * schedule is within the tolerance; otherwise it gets a slot of its own after those already handed
 * out (`later`), so messages held back come back one interval apart instead of all at once. A
 * deferral multiplies the rate, taken as at most the rate the group was really sending at, by the
 * decrease factor (at most once a second); each accepted message adds `recoveryPerSecond` per
 * second since the last one, up to the ceiling.
 */
export class GroupRate {
  rate: number;
  private due = 0;
  private reserved = 0;
  private lastDecrease = 0;
  private lastGrowth = 0;
  private second = 0;
  private thisSecond = 0;
  private lastSecond = 0;

  constructor(private readonly config: GovernorConfig) {
    this.rate = config.maxRate;
  }

  /** `undefined`: go now; a time (ms): not before then. */
  admit(now: number): number | undefined {
    const interval = 1000 / this.rate;
    const due = Math.max(this.due, now);
    if (due - now <= TOLERANCE_MS) {
      this.due = due + interval;
      this.count(now);
      return undefined;
    }
    this.reserved = Math.max(this.reserved, due - TOLERANCE_MS, now) + interval;
    return Math.ceil(this.reserved);
  }

  /** Answers whether the rate changed. */
  deferred(now: number): boolean {
    if (now - this.lastDecrease < DECREASE_EVERY_MS) return false;
    this.lastDecrease = now;
    this.lastGrowth = now;
    const sending = Math.min(this.rate, Math.max(this.observed(now), this.config.minRate));
    this.rate = Math.max(this.config.minRate, sending * this.config.decreaseFactor);
    return true;
  }

  /** Answers whether the rate changed. */
  accepted(now: number): boolean {
    if (this.rate >= this.config.maxRate) return false;
    const elapsed = Math.min(MAX_GROWTH_STEP_MS, Math.max(0, now - this.lastGrowth));
    this.lastGrowth = now;
    this.rate = Math.min(this.config.maxRate, this.rate + (this.config.recoveryPerSecond * elapsed) / 1000);
    return true;
  }

  /** Messages per second passed over about the last second. */
  private observed(now: number): number {
    this.count(now, 0);
    const fraction = (now % 1000) / 1000;
    return this.thisSecond + this.lastSecond * (1 - fraction);
  }

  private count(now: number, n = 1) {
    const second = Math.floor(now / 1000);
    if (second !== this.second) {
      this.lastSecond = second === this.second + 1 ? this.thisSecond : 0;
      this.thisSecond = 0;
      this.second = second;
    }
    this.thisSecond += n;
  }
}
