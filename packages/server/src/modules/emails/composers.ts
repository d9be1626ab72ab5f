import type { ComposedMessage } from '../composition/public.js';

/** A queued email whose content is composed at delivery (campaign mail), as delivery hands it over. */
export interface DeferredEmail {
  id: string;
  campaign_id: string;
  contact_id: string | null;
  tracked: boolean;
  headers: Record<string, string>;
}

/** What a composer read for one claimed batch; `compose` answers undefined when the message must not go out. */
export interface DeferredBatch {
  compose(email: DeferredEmail): Promise<ComposedMessage | undefined>;
}

/**
 * Composes mail of one kind at delivery. The module that owns the content (campaigns) implements
 * it and the composition root registers it with `startDelivery`, so delivery imports none of them.
 */
export interface DeliveryComposer {
  /** A NOTIFY channel whose payloads the composer hears (a cancelled campaign's id). */
  channel: string;
  heard(payload: string): void;
  /** Reads what composing the batch's emails needs, in one query, at claim time. */
  load(emails: DeferredEmail[]): Promise<DeferredBatch>;
}

/** The composers delivery uses, by kind of deferred content. */
export interface DeliveryComposers {
  campaign: DeliveryComposer;
}
