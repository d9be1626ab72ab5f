import { describe, expect, it } from 'vitest';
import type { Relay, Relays } from '../../mail/relays.js';
import { RelayRouter } from './relay-router.js';

/** Relays whose transports are never used here: the router only chooses among them. */
function router(names: string[]) {
  const list = names.map((name) => ({ name, kind: 'smtp' }) as Relay);
  const relays = { list, routes: { transactional: names, campaign: names }, system: list[0] } as Relays;
  const events: string[] = [];
  const r = new RelayRouter(relays, { probeBaseMs: 1000, probeMaxMs: 4000 }, (relay) => ({
    opened: () => events.push(`${relay.name} opened`),
    reopened: () => events.push(`${relay.name} reopened`),
    closed: () => events.push(`${relay.name} closed`),
  }));
  return { r, events };
}

describe('RelayRouter', () => {
  it('one relay: the breaker of before (a probe claim when due, one loop at a time)', () => {
    const { r, events } = router(['smtp']);
    expect(r.admit()).toEqual({ kind: 'claim' });
    const first = r.choose(['smtp']);
    expect(first).toMatchObject({ relay: { name: 'smtp' }, probe: false });
    r.failed(first as NonNullable<typeof first>, 'refused');
    expect(events).toEqual(['smtp opened']);
    expect(r.allOpen).toBe(true);
    expect(r.choose(['smtp'])).toBeUndefined(); // the rest of a batch goes back untried
    const now = Date.now();
    expect(r.admit(now).kind).toBe('wait');
    const due = now + 1100;
    expect(r.admit(due)).toEqual({ kind: 'probe' });
    expect(r.admit(due).kind).toBe('wait'); // another loop waits while one holds the probe claim
    const probe = r.choose(['smtp'], due);
    expect(probe).toMatchObject({ probe: true });
    r.answered(probe as NonNullable<typeof probe>);
    r.probeClaimDone();
    expect(events).toEqual(['smtp opened', 'smtp closed']);
    expect(r.admit()).toEqual({ kind: 'claim' });
  });

  it('a relay down: its route’s mail goes to the next, the relay is probed when due and taken back', () => {
    const { r, events } = router(['a', 'b']);
    const a = r.choose(['a', 'b']);
    r.failed(a as NonNullable<typeof a>, 'refused');
    expect(r.allOpen).toBe(false);
    expect(r.admit()).toEqual({ kind: 'claim' });
    expect(r.choose(['a', 'b'])).toMatchObject({ relay: { name: 'b' }, probe: false });
    // A route of the relay that is down alone waits until its probe time, while others go on.
    const now = Date.now();
    expect(r.choose(['a'], now)).toBeUndefined();
    expect(r.claiming).toBe(true);
    expect(r.nextTryAt(['a'], now).getTime()).toBeGreaterThan(now + 900);
    // Due: the next message of a route naming A probes it; the one after goes to B meanwhile.
    const due = now + 1100;
    const probe = r.choose(['a', 'b'], due);
    expect(probe).toMatchObject({ relay: { name: 'a' }, probe: true });
    expect(r.choose(['a', 'b'], due)).toMatchObject({ relay: { name: 'b' } });
    r.answered(probe as NonNullable<typeof probe>);
    expect(r.choose(['a', 'b'])).toMatchObject({ relay: { name: 'a' }, probe: false });
    expect(events).toEqual(['a opened', 'a closed']);
  });

  it('every relay down: nothing claimed until a probe time, then one message for the probe', () => {
    const { r } = router(['a', 'b']);
    for (const name of ['a', 'b']) {
      const c = r.choose([name]);
      r.failed(c as NonNullable<typeof c>, 'refused');
    }
    expect(r.allOpen).toBe(true);
    expect(r.claiming).toBe(false);
    expect(r.admit().kind).toBe('wait');
    const due = Date.now() + 1100;
    expect(r.admit(due)).toEqual({ kind: 'probe' });
    // Both are due: the claimed message probes the first relay of its own route.
    expect(r.choose(['b'], due)).toMatchObject({ relay: { name: 'b' }, probe: true });
    expect(r.claiming).toBe(true);
    r.probeClaimDone();
    expect(r.claiming).toBe(false);
  });
});
