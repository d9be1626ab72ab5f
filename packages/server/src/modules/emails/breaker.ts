/**
 * A process's circuit breaker for its mail transport. Closed, every delivery loop claims batches.
 * A transport failure opens it: nothing is claimed until the probe time, then one loop claims one
 * message as the probe. The transport answering anything about a message (accepted, or refused for
 * that message) closes it; another transport failure reopens it with the wait doubled, up to the
 * maximum. Each worker process keeps its own breaker and probes on its own (one message per probe);
 * `transport_status` is the shared view (see transport-status.ts).
 */
export type Admission = 'claim' | 'probe' | 'wait';

export interface BreakerEvents {
  opened(error: string, nextProbeAt: Date): void;
  reopened(error: string, nextProbeAt: Date): void;
  closed(): void;
}

export class TransportBreaker {
  private open = false;
  private probing = false;
  private waitMs = 0;
  private probeAt = 0;

  constructor(
    private readonly timing: { probeBaseMs: number; probeMaxMs: number },
    private readonly events: BreakerEvents,
  ) {}

  get isOpen(): boolean {
    return this.open;
  }

  /** What a delivery loop may do now. */
  admit(now = Date.now()): Admission {
    if (!this.open) return 'claim';
    if (this.probing || now < this.probeAt) return 'wait';
    this.probing = true;
    return 'probe';
  }

  /** Open, its probe time has come and no probe is out. */
  probeDue(now = Date.now()): boolean {
    return this.open && !this.probing && now >= this.probeAt;
  }

  /** How long an idle loop should sleep before asking again. */
  msUntilProbe(now = Date.now()): number {
    return this.open ? Math.max(0, this.probeAt - now) : 0;
  }

  /** The probe found nothing to send: the next loop may probe again when there is. */
  probeSkipped(): void {
    this.probing = false;
  }

  transportFailed(error: string, wasProbe: boolean): void {
    if (!this.open) {
      this.open = true;
      this.waitMs = this.timing.probeBaseMs;
      this.probeAt = Date.now() + this.waitMs;
      this.events.opened(error, new Date(this.probeAt));
    } else if (wasProbe) {
      this.probing = false;
      this.waitMs = Math.min(this.waitMs * 2, this.timing.probeMaxMs);
      this.probeAt = Date.now() + this.waitMs;
      this.events.reopened(error, new Date(this.probeAt));
    }
  }

  /** The transport answered about a message (either way): it works. */
  transportAnswered(): void {
    if (!this.open) return;
    this.open = false;
    this.probing = false;
    this.waitMs = 0;
    this.events.closed();
  }
}
