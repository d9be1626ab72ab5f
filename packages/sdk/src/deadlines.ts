/**
 * Per-attempt timeouts shared by attempts that start close together. An AbortController and a timer
 * of its own for every request cost a client making thousands of calls a second several percent of
 * its CPU (`bench/scenarios/sdk-track.mjs`): creating the signal, and undici's work to follow it.
 * Attempts with the same timeout that start within one span (5% of the timeout, at most 1 s) join
 * one group, whose signal aborts when the last of them is due: each attempt times out after its
 * `timeoutMs`, and at most one span later. A group takes at most {@link GROUP_CAPACITY} attempts,
 * because fetch adds a listener per request to the signal and looks at all of them each time.
 */
export interface DeadlineGroup {
  readonly signal: AbortSignal;
  /** True once the group's deadline has passed (its signal is then aborted). */
  readonly expired: boolean;
}

const GROUP_CAPACITY = 16;
const MAX_SPAN_MS = 1_000;

interface Group extends DeadlineGroup {
  readonly controller: AbortController;
  readonly timeoutMs: number;
  readonly closesAt: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  expired: boolean;
  running: number;
  joined: number;
}

export class SharedDeadlines {
  /** The group that attempts with a given timeout join now. */
  private readonly open = new Map<number, Group>();

  /** The group of an attempt starting now; call {@link leave} when the attempt is over. */
  join(timeoutMs: number): DeadlineGroup {
    const now = Date.now();
    let group = this.open.get(timeoutMs);
    if (!group || now >= group.closesAt || group.joined >= GROUP_CAPACITY) {
      if (group) this.close(group);
      group = this.start(timeoutMs, now);
    }
    group.running++;
    group.joined++;
    return group;
  }

  leave(joined: DeadlineGroup): void {
    const group = joined as Group;
    group.running--;
    if (group.running > 0) return;
    if (this.open.get(group.timeoutMs) !== group) this.settle(group);
    else if (Date.now() >= group.closesAt) this.close(group);
  }

  private start(timeoutMs: number, now: number): Group {
    const span = Math.min(MAX_SPAN_MS, Math.max(1, Math.ceil(timeoutMs / 20)));
    const controller = new AbortController();
    const group: Group = {
      controller,
      signal: controller.signal,
      timeoutMs,
      closesAt: now + span,
      timer: undefined,
      expired: false,
      running: 0,
      joined: 0,
    };
    group.timer = setTimeout(() => {
      group.expired = true;
      group.timer = undefined;
      if (this.open.get(timeoutMs) === group) this.open.delete(timeoutMs);
      controller.abort();
    }, span + timeoutMs);
    // An in-flight request keeps the process alive by its socket; the timer alone must not.
    (group.timer as { unref?: () => void }).unref?.();
    this.open.set(timeoutMs, group);
    return group;
  }

  /** No attempt joins the group any more; its timer goes once its last attempt is over. */
  private close(group: Group): void {
    this.open.delete(group.timeoutMs);
    if (group.running === 0) this.settle(group);
  }

  private settle(group: Group): void {
    if (group.timer !== undefined) clearTimeout(group.timer);
    group.timer = undefined;
  }
}
