import type { Relay, Relays } from '../../mail/relays.js';
import { type BreakerEvents, TransportBreaker } from './breaker.js';

/** What a delivery loop may do now: claim a batch, claim one message to probe a relay that is down, or wait. */
export type LoopAdmission = { kind: 'claim' } | { kind: 'probe' } | { kind: 'wait'; ms: number };

/** The relay a message goes to, and whether it is that relay's probe. */
export interface RelayChoice {
  relay: Relay;
  probe: boolean;
}

/**
 * One circuit breaker per relay (breaker.ts) and the choice of a relay per message: the first relay
 * of the message's route whose breaker admits it, a relay that is down taking one message as its
 * probe once its probe time has come. While every relay is down the loops claim nothing until a
 * probe time, then one loop claims one message (the probe slot), as with a single relay; with one
 * relay this is exactly the one breaker of before.
 */
export class RelayRouter {
  private readonly breakers = new Map<string, TransportBreaker>();
  /** A loop holds the probe claim (every relay down): the others wait. */
  private probeClaimed = false;

  constructor(
    private readonly relays: Relays,
    timing: { probeBaseMs: number; probeMaxMs: number },
    events: (relay: Relay) => BreakerEvents,
  ) {
    for (const relay of relays.list) this.breakers.set(relay.name, new TransportBreaker(timing, events(relay)));
  }

  private breaker(name: string): TransportBreaker {
    return this.breakers.get(name) as TransportBreaker;
  }

  /** Every relay's breaker is open: the rest of a claimed batch goes back untried. */
  get allOpen(): boolean {
    for (const b of this.breakers.values()) if (!b.isOpen) return false;
    return true;
  }

  /**
   * Loops go on claiming: some relay is up, or a loop holds the probe claim. A message none of
   * whose relays admits it is then set aside until its route's next probe time.
   */
  get claiming(): boolean {
    return !this.allOpen || this.probeClaimed;
  }

  /** What a delivery loop may do now. */
  admit(now = Date.now()): LoopAdmission {
    if (!this.allOpen) return { kind: 'claim' };
    if (!this.probeClaimed && [...this.breakers.values()].some((b) => b.probeDue(now))) {
      this.probeClaimed = true;
      return { kind: 'probe' };
    }
    const ms = Math.min(...[...this.breakers.values()].map((b) => b.msUntilProbe(now)));
    return { kind: 'wait', ms };
  }

  /** The loop that held the probe claim is done with its message (sent, or not sent at all). */
  probeClaimDone(): void {
    this.probeClaimed = false;
  }

  /**
   * The relay for a message of `route` (relay names in order), or undefined when none admits it
   * now: each relay that is down and whose probe time has come takes the message as its probe.
   */
  choose(route: string[], now = Date.now()): RelayChoice | undefined {
    for (const name of route) {
      const relay = this.relays.list.find((r) => r.name === name);
      if (!relay) continue;
      const admission = this.breaker(name).admit(now);
      if (admission !== 'wait') return { relay, probe: admission === 'probe' };
    }
    return undefined;
  }

  /** When a message none of whose relays admits it may be tried again: the route's next probe time. */
  nextTryAt(route: string[], now = Date.now()): Date {
    const waits = route.filter((n) => this.breakers.has(n)).map((n) => this.breaker(n).msUntilProbe(now));
    // A probe in flight (its time passed): look again shortly, as an idle loop does.
    const ms = Math.min(...waits.map((w) => (w > 0 ? w : IDLE_RETRY_MS)));
    return new Date(now + (Number.isFinite(ms) ? ms : IDLE_RETRY_MS));
  }

  /** The relay answered about a message (accepted it, or refused it for that message): it works. */
  answered(choice: RelayChoice): void {
    this.breaker(choice.relay.name).transportAnswered();
  }

  /** The relay failed as a transport (refused connection, timeout, TLS, 421 …). */
  failed(choice: RelayChoice, error: string): void {
    this.breaker(choice.relay.name).transportFailed(error, choice.probe);
  }

  /** A probe that was chosen and then not sent tested nothing. */
  notSent(choice: RelayChoice): void {
    if (choice.probe) this.breaker(choice.relay.name).probeSkipped();
  }
}

const IDLE_RETRY_MS = 1000;
