import { isDeepStrictEqual } from 'node:util';
import { uuidv7 } from 'uuidv7';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import type { DeferredKey, KeyCheck } from '../../kit/caller.js';
import { validationFailed } from '../../kit/errors.js';
import { feedWaker } from '../change-feed/public.js';
import { applyDataRules } from '../contacts/public.js';
import { type Claim, reusedKeyError } from '../idempotency/public.js';
import { isReservedEventName } from './reserved.js';
import { TrackBatcher } from './track-batcher.js';
import { runTrackStatement, type TrackOwner, type TrackRow, type TrackRowOutcome } from './track-statement.js';

export interface TrackInput {
  email: string;
  event: string;
  subscribed?: boolean;
  data?: Record<string, unknown>;
}

/**
 * A track request as a row of the track statement: the data rules applied, and every id made here
 * (v7, in order: the contact, a possible subscription-change event, then the tracked event).
 */
export function toTrackRow(input: TrackInput, idempotencyKey: string | null = null): TrackRow {
  if (isReservedEventName(input.event)) {
    throw validationFailed(
      [
        {
          field: 'event',
          message: `"${input.event}" is reserved for events Pigeon emits itself`,
          code: 'reserved_event',
          received: input.event,
        },
      ],
      'The event name is reserved',
    );
  }
  const changes = applyDataRules(input.data, { storeObjects: true });
  return {
    email: input.email,
    contactId: uuidv7(),
    subscribed: input.subscribed ?? null,
    setData: JSON.stringify(changes.set),
    unsetKeys: JSON.stringify(changes.unset),
    subscriptionEventId: uuidv7(),
    eventId: uuidv7(),
    event: input.event,
    eventData: JSON.stringify({ ...changes.set, ...changes.transient }),
    idempotencyKey,
  };
}

/** What a track statement's key check found, as the authentication middleware would report it. */
export const keyCheckOf = (outcome: TrackRowOutcome): KeyCheck =>
  outcome.found
    ? { found: true, disabled: outcome.disabled, disabledReason: outcome.disabledReason, hits: outcome.hits }
    : { found: false };

/** The answer's `data` for a recorded track. */
export const trackResult = (tracked: NonNullable<TrackRowOutcome['tracked']>) => ({
  contact: tracked.contactId,
  event: tracked.eventId,
  timestamp: tracked.createdAt.toISOString(),
});

/**
 * One track in its own statement, the key checked in it (no grouping). The HTTP route groups
 * concurrent tracks through `TrackBatcher`; the bench's same-work baseline runs this.
 */
export async function trackWithKey(db: Queryable, key: DeferredKey, rateLimitPerMinute: number, input: TrackInput) {
  const [outcome] = await runTrackStatement(db, { by: key.keyType, keyHash: key.keyHash }, [toTrackRow(input)], {
    rateLimitPerMinute,
    idempotencyTtlMinutes: 60,
  });
  const found = outcome as TrackRowOutcome;
  return { check: keyCheckOf(found), result: found.tracked && trackResult(found.tracked) };
}

/**
 * `POST /v1/track` (and the dashboard's track): one batcher per process groups concurrent tracks
 * into one statement, which also checks the key, counts the rate limit and claims the
 * Idempotency-Key. `settle` answers what the key check found (401, 403, the rate limit) before
 * anything else is answered; a key already used is then a 409.
 */
export function createTracker(deps: AppDeps) {
  const db = deps.db.pool;
  const batcher = new TrackBatcher(db, {
    rateLimitPerMinute: deps.config.rateLimitPerMinute,
    idempotencyTtlMinutes: deps.config.track.idempotencyTtlMinutes,
    maxRows: deps.config.track.batchMaxRows,
    maxStatements: deps.config.track.batchStatements,
    stallMs: deps.config.track.batchStallMs,
  });
  const wakeFeed = feedWaker(db, (err) =>
    deps.logger.warn({ err }, 'change feed NOTIFY not sent; it reads at its poll'),
  );
  return async function trackEvent(
    owner: TrackOwner,
    input: TrackInput,
    idempotencyKey: string | null,
    settle: (check: KeyCheck) => void,
  ) {
    const row = toTrackRow(input, idempotencyKey);
    const outcome = await batcher.track(owner, row);
    settle(keyCheckOf(outcome));
    if (outcome.tracked) {
      wakeFeed();
      return trackResult(outcome.tracked);
    }
    if (idempotencyKey !== null && outcome.projectId) {
      throw await reusedKeyError(db, outcome.projectId, idempotencyKey, 'POST /v1/track', deps.clock.now(), (claim) =>
        isRetryOf(claim, row),
      );
    }
    throw new Error('track stored no event');
  };
}

/**
 * Whether a track is a retry of the one that claimed its key: a track's claim keeps no digest of its
 * body (the hot path writes none), so the event it recorded stands for it. A claim with no event
 * (in flight, or failed) cannot tell, and counts as a retry.
 */
function isRetryOf(claim: Claim, row: TrackRow): boolean {
  if (claim.request !== 'POST /v1/track') return false;
  if (!claim.event) return true;
  const { name, email, data } = claim.event;
  return name === row.event && email === row.email && isDeepStrictEqual(data, JSON.parse(row.eventData));
}

/** The process's track function (one batcher behind it). */
export type TrackEvent = ReturnType<typeof createTracker>;
