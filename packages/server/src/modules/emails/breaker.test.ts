import { describe, expect, it } from 'vitest';
import { TransportBreaker } from './breaker.js';

function breaker() {
  const events: string[] = [];
  const b = new TransportBreaker(
    { probeBaseMs: 1000, probeMaxMs: 4000 },
    {
      opened: (_e, at) => events.push(`opened ${at.getTime()}`),
      reopened: (_e, at) => events.push(`reopened ${at.getTime()}`),
      closed: () => events.push('closed'),
    },
  );
  return { b, events };
}

describe('TransportBreaker', () => {
  it('opens on a transport failure, lets one probe through when due, doubles the wait up to the maximum', () => {
    const { b, events } = breaker();
    expect(b.admit()).toBe('claim');
    const t0 = Date.now();
    b.transportFailed('refused', false);
    b.transportFailed('refused', false); // another loop's message failing too changes nothing
    expect(events).toHaveLength(1);
    expect(b.admit(t0)).toBe('wait');
    expect(b.msUntilProbe(t0)).toBeGreaterThan(900);
    const due = t0 + 1000 + 100;
    expect(b.admit(due)).toBe('probe');
    expect(b.admit(due)).toBe('wait'); // one probe at a time
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const before = Date.now();
      b.transportFailed('refused', true);
      waits.push(b.msUntilProbe(before));
      expect(b.admit(Date.now() + 10_000)).toBe('probe');
    }
    expect(waits.map((w) => Math.round(w / 1000))).toEqual([2, 4, 4, 4]);
  });

  it('closes when the transport answers anything about a message; a probe with nothing to send is given back', () => {
    const { b, events } = breaker();
    b.transportFailed('refused', false);
    expect(b.admit(Date.now() + 2000)).toBe('probe');
    b.probeSkipped();
    expect(b.admit(Date.now() + 2000)).toBe('probe');
    b.transportAnswered();
    expect(b.isOpen).toBe(false);
    expect(b.admit()).toBe('claim');
    expect(events.at(-1)).toBe('closed');
  });
});
