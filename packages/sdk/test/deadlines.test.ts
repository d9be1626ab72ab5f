import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SharedDeadlines } from '../src/deadlines.js';

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('shared deadlines', () => {
  it('gives every attempt of a group at least its timeout, and at most one span (5%) more', () => {
    const deadlines = new SharedDeadlines();
    const first = deadlines.join(1_000); // span 50 ms
    vi.advanceTimersByTime(49);
    const last = deadlines.join(1_000);
    expect(last).toBe(first);
    vi.advanceTimersByTime(1_000); // 1,049 ms: the last attempt has had 1,000 ms
    expect(first.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(first.expired).toBe(true);
    expect(first.signal.aborted).toBe(true);
  });

  it('starts a new group after the span, for another timeout, and after 16 attempts', () => {
    const deadlines = new SharedDeadlines();
    const groups = new Set(Array.from({ length: 16 }, () => deadlines.join(1_000)));
    expect(groups.size).toBe(1);
    const [full] = groups;
    expect(deadlines.join(1_000)).not.toBe(full);
    expect(deadlines.join(2_000)).not.toBe(full);
    const fresh = deadlines.join(500);
    vi.advanceTimersByTime(25); // the 500 ms group's span
    expect(deadlines.join(500)).not.toBe(fresh);
  });

  it('stops the timer of a closed group once its last attempt is over', () => {
    const deadlines = new SharedDeadlines();
    const a = deadlines.join(1_000);
    const b = deadlines.join(1_000);
    vi.advanceTimersByTime(60);
    const next = deadlines.join(1_000); // closes the first group
    expect(vi.getTimerCount()).toBe(2);
    deadlines.leave(a);
    expect(vi.getTimerCount()).toBe(2);
    deadlines.leave(b);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(60);
    deadlines.leave(next); // past its span, nothing running: closed at once
    expect(vi.getTimerCount()).toBe(0);
    expect(a.signal.aborted || next.signal.aborted).toBe(false);
  });
});
