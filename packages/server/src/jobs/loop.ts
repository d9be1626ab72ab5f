import type { Logger } from '../logger.js';
import { loopClaims, loopErrors, loopWakeups } from '../metrics/registry.js';
import type { ListenHub } from './listen-hub.js';

/**
 * One background loop: `concurrency` runners, each claiming work and handling it, then claiming
 * again at once, resting, or waiting (until a NOTIFY on one of `channels`, a local `wake()`, or
 * `idleMs`). Delivery, the workflow runner, the change feed, event webhooks and the campaign
 * dispatcher are each one of these; what a claim takes and how it is handled is theirs.
 */
export interface LoopSpec<T> {
  /** A metric label and the log's component: `delivery`, `workflows`… */
  name: string;
  /** NOTIFY channels that wake every waiting runner. */
  channels?: readonly string[];
  /** Called with each NOTIFY payload of `channels`, before the runners wake. */
  heard?(channel: string, payload: string): void;
  /** Runners in this process (default 1). */
  concurrency?: number;
  /**
   * Takes work (rows claimed with FOR UPDATE SKIP LOCKED, a transaction run…); undefined when
   * there is none. A runner's claims run one at a time.
   */
  claim(): Promise<T | undefined>;
  /** Handles what `claim` took. It runs to its end after `stop` too: `stopping()` says to wrap up. */
  handle?(work: T, stopping: () => boolean): Promise<void>;
  /** After handled work: claim again at once (default), or rest / wait as below. */
  again?(work: T): boolean;
  /** After handled work that does not go `again`: a pause no wake cuts short (lets work gather into batches). */
  restMs?(work: T): number;
  /**
   * The longest wait of a runner that found nothing (or whose work did not go `again`), called
   * each time; a wake ends it sooner.
   */
  idleMs: number | ((work: T | undefined) => number | Promise<number>);
  /** Run before a claim at most every `everyMs` in this process: work of dead processes made claimable again. */
  reclaim?: { everyMs: number; run(): Promise<void> };
  /** After an error: the runner's pause before it claims again (default 1000 ms). */
  errorPauseMs?: number;
  /** Called once the runners have ended (or the grace ran out), before `stop` resolves. */
  stopped?(graceLeftMs: number): Promise<void>;
}

export interface RunningLoop {
  /** Wakes every waiting runner (and makes a runner that is claiming claim again before it waits). */
  wake(): void;
  /** No new claims; waits up to `graceMs` for the runners to finish what they hold. */
  stop(graceMs: number): Promise<void>;
}

/** A wait that `wake` ends early; a wake while the runner was busy ends its next wait at once. */
class Waker {
  private pending = false;
  private resolve: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  wake() {
    this.pending = true;
    clearTimeout(this.timer);
    const resolve = this.resolve;
    this.resolve = undefined;
    resolve?.();
  }

  /** Forgets wakes from before a claim: the claim sees what they announced. */
  clear() {
    this.pending = false;
  }

  wait(ms: number): Promise<'woken' | 'timeout'> {
    if (this.pending) return Promise.resolve('woken');
    return new Promise((resolve) => {
      this.resolve = () => resolve('woken');
      // setTimeout takes at most 2^31 − 1 ms (a longer one fires at once): an endless wait has no timer.
      if (!Number.isFinite(ms)) return;
      this.timer = setTimeout(() => {
        this.resolve = undefined;
        resolve('timeout');
      }, ms);
    });
  }
}

/** Resolves after `ms` (never, for an endless one), or as soon as `cut` settles; leaves no timer behind. */
function pauseFor(ms: number, cut: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = Number.isFinite(ms)
    ? new Promise<void>((r) => (timer = setTimeout(r, ms)))
    : new Promise<void>(() => {});
  return Promise.race([elapsed, cut.then(() => {})]).finally(() => clearTimeout(timer));
}

export async function startLoop<T>(hub: ListenHub, logger: Logger, spec: LoopSpec<T>): Promise<RunningLoop> {
  const log = logger.child({ component: spec.name });
  const wakers = Array.from({ length: spec.concurrency ?? 1 }, () => new Waker());
  let running = true;
  let stopSignal: () => void = () => {};
  const stopped = new Promise<void>((r) => (stopSignal = r));
  let lastReclaim = 0;
  const stopping = () => !running;
  const wakeAll = () => {
    for (const w of wakers) w.wake();
  };

  for (const channel of spec.channels ?? []) {
    await hub.subscribe(channel, (payload) => {
      if (!running) return;
      spec.heard?.(channel, payload);
      loopWakeups.inc({ loop: spec.name, cause: 'notify' });
      wakeAll();
    });
  }

  const idleMs = (work: T | undefined) => (typeof spec.idleMs === 'number' ? spec.idleMs : spec.idleMs(work));

  async function reclaimIfDue() {
    if (!spec.reclaim || Date.now() - lastReclaim < spec.reclaim.everyMs) return;
    lastReclaim = Date.now();
    await spec.reclaim.run();
  }

  /** One claim and its handling; what the runner does next. */
  async function turn(waker: Waker): Promise<() => Promise<unknown>> {
    waker.clear();
    await reclaimIfDue();
    const work = await spec.claim();
    loopClaims.inc({ loop: spec.name, outcome: work === undefined ? 'empty' : 'work' });
    if (work !== undefined) {
      await spec.handle?.(work, stopping);
      if (spec.again?.(work) ?? true) return async () => {};
      const rest = spec.restMs?.(work) ?? 0;
      if (rest > 0) return () => pauseFor(rest, stopped);
    }
    const ms = await idleMs(work);
    return async () => {
      if ((await waker.wait(ms)) === 'timeout') loopWakeups.inc({ loop: spec.name, cause: 'timer' });
    };
  }

  async function runner(waker: Waker) {
    while (running) {
      let pause: () => Promise<unknown>;
      try {
        pause = await turn(waker);
      } catch (err) {
        loopErrors.inc({ loop: spec.name });
        log.error({ err }, `${spec.name} loop error`);
        pause = () => waker.wait(spec.errorPauseMs ?? 1000);
      }
      if (running) await pause();
    }
  }

  const runners = wakers.map(runner);
  log.info({ runners: runners.length }, `${spec.name} loop started`);
  return {
    wake() {
      loopWakeups.inc({ loop: spec.name, cause: 'local' });
      wakeAll();
    },
    async stop(graceMs) {
      if (!running) return;
      running = false;
      stopSignal();
      wakeAll();
      const started = Date.now();
      await pauseFor(graceMs, Promise.allSettled(runners));
      await spec.stopped?.(Math.max(0, graceMs - (Date.now() - started)));
    },
  };
}
