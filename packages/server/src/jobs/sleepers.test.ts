import { describe, expect, it } from 'vitest';
import { createSleepers } from './sleepers.js';

const HOUR = 3_600_000;
const settled = (p: Promise<void>) => Promise.race([p.then(() => true), new Promise((r) => setTimeout(r, 50, false))]);

describe('the sleeps of a worker loop', () => {
  it('end at wakeAll, every one of them', async () => {
    const sleepers = createSleepers();
    const sleeps = [sleepers.sleep(HOUR), sleepers.sleep(HOUR)];
    expect(await settled(sleeps[0] as Promise<void>)).toBe(false);
    sleepers.wakeAll();
    expect(await Promise.all(sleeps.map(settled))).toEqual([true, true]);
  });

  it('end at stop, and one begun after the stop does not wait at all', async () => {
    const sleepers = createSleepers();
    const before = sleepers.sleep(HOUR);
    sleepers.stop();
    expect(await settled(before)).toBe(true);
    expect(await settled(sleepers.sleep(HOUR))).toBe(true);
  });
});
