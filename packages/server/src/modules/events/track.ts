import { uuidv7 } from 'uuidv7';
import { prepared, type Queryable } from '../../db/sql.js';
import type { DeferredKey, KeyCheck } from '../../http/auth.js';
import { validationFailed } from '../../http/errors.js';
import { currentWindow, rateLimitCtes } from '../../http/rate-limit.js';
import { applyDataRules } from '../contacts/data-rules.js';
import { upsertCtes, upsertParams } from '../contacts/repository.js';
import { isReservedEventName } from './reserved.js';

export interface TrackInput {
  email: string;
  event: string;
  subscribed?: boolean;
  data?: Record<string, unknown>;
}

const trackedCte = `tracked AS (
    INSERT INTO events (id, project_id, contact_id, name, data)
    SELECT $10::uuid, u.project_id, u.id, $11::text, $12::jsonb FROM upserted u
    RETURNING id, contact_id, created_at
  )`;

/**
 * Contact upsert, subscription-change event and the tracked event in one statement: one round
 * trip, atomic. Workflows react to the stored event later, never inside this request.
 */
const TRACK_SQL = `WITH ${upsertCtes()}, ${trackedCte} SELECT contact_id, id AS event_id, created_at FROM tracked`;

/**
 * The same with the key check in front (see `DeferredKey`): the project is found by the key's
 * hash and counted against its rate limit, and the writes happen only for an enabled project
 * within its limit. The outcome columns let the caller answer 401, 403 or 429 exactly as the
 * authentication middleware would.
 */
const trackWithKeySql = (column: 'public' | 'secret', limited: boolean) => `
  WITH key_project AS (
    SELECT id, disabled, disabled_reason FROM projects WHERE ${column}_key_hash = $1
  )${limited ? `, ${rateLimitCtes('key_project', '$13::bigint', 'key')}` : ''}, authorized AS (
    SELECT id FROM key_project WHERE NOT disabled${limited ? ' AND (SELECT hits FROM hit) <= $14::int' : ''}
  ), ${upsertCtes({ project: '(SELECT id FROM authorized)', guard: 'EXISTS (SELECT 1 FROM authorized)' })},
  ${trackedCte}
  SELECT k.disabled, k.disabled_reason, ${limited ? '(SELECT hits FROM hit)' : 'NULL::int'} AS hits,
         t.contact_id, t.id AS event_id, t.created_at
  FROM key_project k LEFT JOIN tracked t ON true`;

function prepare(input: TrackInput) {
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
  const [, ...rest] = upsertParams({
    projectId: '',
    email: input.email,
    subscribed: input.subscribed,
    subscribedIfNew: true,
    changes,
    source: 'track',
  });
  const tail = [uuidv7(), input.event, JSON.stringify({ ...changes.set, ...changes.transient })];
  /** All parameters, with $1 the project id or, for the key-checking form, the key's hash. */
  return (first: unknown) => [first, ...rest, ...tail];
}

interface TrackedRow {
  contact_id: string;
  event_id: string;
  created_at: Date;
}

const toResult = (row: TrackedRow) => ({
  contact: row.contact_id,
  event: row.event_id,
  timestamp: row.created_at.toISOString(),
});

export async function trackEvent(db: Queryable, projectId: string, input: TrackInput) {
  const [row] = await prepared<TrackedRow>(db, 'events.track', TRACK_SQL, prepare(input)(projectId));
  if (!row) throw new Error('track returned no row');
  return toResult(row);
}

/** Track for a caller whose key is checked in the same statement; returns what the check found. */
export async function trackWithKey(db: Queryable, key: DeferredKey, rateLimitPerMinute: number, input: TrackInput) {
  const limited = rateLimitPerMinute > 0;
  const extra = limited ? [currentWindow().window, rateLimitPerMinute] : [];
  const [row] = await prepared<TrackedRow & { disabled: boolean; disabled_reason: string | null; hits: number | null }>(
    db,
    `events.track.${key.keyType}.${limited ? 'counted' : 'plain'}`,
    trackWithKeySql(key.keyType, limited),
    [...prepare(input)(key.keyHash), ...extra],
  );
  const check: KeyCheck = row
    ? { found: true, disabled: row.disabled, disabledReason: row.disabled_reason, hits: row.hits }
    : { found: false };
  return { check, result: row?.event_id ? toResult(row) : undefined };
}
