import { uuidv7 } from 'uuidv7';
import { prepared, type Queryable } from '../../db/sql.js';
import { validationFailed } from '../../http/errors.js';
import { applyDataRules } from '../contacts/data-rules.js';
import { UPSERT_CTES, upsertParams } from '../contacts/repository.js';
import { isReservedEventName } from './reserved.js';

export interface TrackInput {
  email: string;
  event: string;
  subscribed?: boolean;
  data?: Record<string, unknown>;
}

/**
 * Contact upsert, subscription-change event and the tracked event in one statement: one round
 * trip, atomic. Workflows react to the stored event later, never inside this request.
 */
const TRACK_SQL = `
  WITH ${UPSERT_CTES}, tracked AS (
    INSERT INTO events (id, project_id, contact_id, name, data)
    SELECT $10::uuid, $1, u.id, $11::text, $12::jsonb FROM upserted u
    RETURNING id, contact_id, created_at
  )
  SELECT contact_id, id AS event_id, created_at FROM tracked`;

export async function trackEvent(db: Queryable, projectId: string, input: TrackInput) {
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
  const eventData = { ...changes.set, ...changes.transient };
  const [row] = await prepared<{ contact_id: string; event_id: string; created_at: Date }>(
    db,
    'events.track',
    TRACK_SQL,
    [
      ...upsertParams({
        projectId,
        email: input.email,
        subscribed: input.subscribed,
        subscribedIfNew: true,
        changes,
        source: 'track',
      }),
      uuidv7(),
      input.event,
      JSON.stringify(eventData),
    ],
  );
  if (!row) throw new Error('track returned no row');
  return { contact: row.contact_id, event: row.event_id, timestamp: row.created_at.toISOString() };
}
