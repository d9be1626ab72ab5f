/**
 * The sleeps of a worker's loops: each ends at its time, at `wakeAll` (a NOTIFY), or at `stop`. A
 * sleep begun after `stop` (a loop that was reading when the stop came) does not wait at all, so a
 * shutdown never waits out a poll.
 */
export interface Sleepers {
  sleep(ms: number): Promise<void>;
  wakeAll(): void;
  stop(): void;
}

export function createSleepers(): Sleepers {
  const wakers = new Set<() => void>();
  let stopped = false;
  const wakeAll = () => {
    for (const wake of [...wakers]) wake();
  };
  return {
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        if (stopped) return resolve();
        const wake = () => {
          clearTimeout(timer);
          wakers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, ms);
        wakers.add(wake);
      }),
    wakeAll,
    stop: () => {
      stopped = true;
      wakeAll();
    },
  };
}
