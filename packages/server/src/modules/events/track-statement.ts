import { preparedRows, raw, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { insertEvents, insertSubscriptionEvents } from '../event-log/public.js';
import { currentWindow, rateLimitCtes } from '../rate-limits/public.js';

/** Whose track it is: a key found by its hash (counted against the rate limit), or a project by id. */
export type TrackOwner = { by: 'public' | 'secret'; keyHash: Buffer } | { by: 'project'; projectId: string };

/** One track, ready for the statement: every id is made by the caller, so ids sort in request order. */
export interface TrackRow {
  email: string;
  contactId: string;
  subscribed: boolean | null;
  /** JSON of the data keys to store, and of the keys to delete (an array). */
  setData: string;
  unsetKeys: string;
  subscriptionEventId: string;
  eventId: string;
  event: string;
  /** JSON of the event's data. */
  eventData: string;
  idempotencyKey: string | null;
}

/** What the statement found for one row. */
export interface TrackRowOutcome {
  /** False: no project has this key. */
  found: boolean;
  projectId: string | null;
  disabled: boolean;
  disabledReason: string | null;
  /** The rate-limit count of this request (null when the owner is not counted). */
  hits: number | null;
  /** Set when the row was recorded. */
  tracked?: { contactId: string; eventId: string; createdAt: Date };
}

export interface TrackStatementOptions {
  /** Requests a minute per project (0: not counted). */
  rateLimitPerMinute: number;
  idempotencyTtlMinutes: number;
}

interface OutcomeRow {
  ord: string;
  project_id: string;
  disabled: boolean;
  disabled_reason: string | null;
  hits: number | null;
  contact_id: string | null;
  event_id: string | null;
  created_at: Date | null;
}

/**
 * Records a group of tracks for one owner in ONE statement (one round trip, one commit): the key
 * check, the rate-limit count (each row gets the count it would have had alone, in order), the
 * Idempotency-Key claims, the contact upserts with their subscription-change events, and the
 * events. Emails and idempotency keys must be unique within the group (the batcher sees to it):
 * PostgreSQL cannot upsert one row twice in a statement. Contacts are locked in email order, so two
 * groups never wait on each other in a cycle through rows they both already had.
 *
 * Rows refused by the key check, the rate limit or a live claim of their Idempotency-Key record
 * nothing; the outcome says why.
 */
export async function runTrackStatement(
  db: Queryable,
  owner: TrackOwner,
  rows: TrackRow[],
  options: TrackStatementOptions,
): Promise<TrackRowOutcome[]> {
  const counted = owner.by !== 'project' && options.rateLimitPerMinute > 0;
  const name = `events.track.${owner.by}.${counted ? 'counted' : 'plain'}`;
  const found = await preparedRows<OutcomeRow>(db, name, trackSql(owner, counted, rows, options));
  const byOrd = new Map(found.map((r) => [Number(r.ord), r]));
  return rows.map((_, i) => toOutcome(byOrd.get(i + 1)));
}

function toOutcome(row: OutcomeRow | undefined): TrackRowOutcome {
  if (!row) return { found: false, projectId: null, disabled: false, disabledReason: null, hits: null };
  return {
    found: true,
    projectId: row.project_id,
    disabled: row.disabled,
    disabledReason: row.disabled_reason,
    hits: row.hits,
    ...(row.event_id &&
      row.contact_id &&
      row.created_at && { tracked: { contactId: row.contact_id, eventId: row.event_id, createdAt: row.created_at } }),
  };
}

const column = <K extends keyof TrackRow>(rows: TrackRow[], key: K) => rows.map((r) => r[key]);

function trackSql(owner: TrackOwner, counted: boolean, rows: TrackRow[], options: TrackStatementOptions): Sql {
  const project =
    owner.by === 'project'
      ? sql`id = ${owner.projectId}::uuid`
      : owner.by === 'public'
        ? sql`public_key_hash = ${owner.keyHash}`
        : sql`secret_key_hash = ${owner.keyHash}`;
  const { window } = currentWindow();
  const n = rows.length;
  // `hit.hits` counts the whole group; the i-th row's own count is what it would have been alone.
  const rowHits = counted ? sql`(SELECT hits FROM hit) - ${n}::int + i.ord::int` : raw('NULL::int');
  const withinLimit = counted
    ? sql`AND (SELECT hits FROM hit) - ${n}::int + i.ord::int <= ${options.rateLimitPerMinute}::int`
    : raw('');
  return sql`
  WITH key_project AS (
    -- The row lock stands in for the foreign key idempotency_keys does not have (deleteProjectKeys).
    SELECT id, disabled, disabled_reason FROM projects WHERE ${project} FOR KEY SHARE
  )${counted ? sql`, ${rateLimitCtes('key_project', window, 'key', n)}` : raw('')}, input AS (
    SELECT * FROM unnest(
      ${column(rows, 'email')}::text[], ${column(rows, 'contactId')}::uuid[], ${column(rows, 'subscribed')}::boolean[],
      ${column(rows, 'setData')}::jsonb[], ${column(rows, 'unsetKeys')}::jsonb[], ${column(rows, 'subscriptionEventId')}::uuid[],
      ${column(rows, 'eventId')}::uuid[], ${column(rows, 'event')}::text[], ${column(rows, 'eventData')}::jsonb[],
      ${column(rows, 'idempotencyKey')}::text[]
    ) WITH ORDINALITY AS t(email, contact_id, subscribed, set_data, unset_keys, sub_event_id, event_id, name, event_data, idem_key, ord)
  ), allowed AS (
    SELECT i.* FROM input i, key_project k WHERE NOT k.disabled ${withinLimit}
  ), claimed AS (
    INSERT INTO idempotency_keys AS k (project_id, key, request, expires_at, status_code, event_id)
    SELECT (SELECT id FROM key_project), a.idem_key, 'POST /v1/track',
           now() + make_interval(mins => ${options.idempotencyTtlMinutes}::int), 200, a.event_id
    FROM allowed a WHERE a.idem_key IS NOT NULL
    ON CONFLICT (project_id, key) DO UPDATE
      SET request = EXCLUDED.request, status_code = 200, response = NULL, created_at = now(),
          expires_at = EXCLUDED.expires_at, event_id = EXCLUDED.event_id
      WHERE k.expires_at <= now()
    RETURNING k.key
  ), proceeding AS (
    SELECT a.* FROM allowed a WHERE a.idem_key IS NULL OR a.idem_key IN (SELECT key FROM claimed)
  ), existing AS (
    -- One probe of the (project, email) index per row of the group, in email order (the order the
    -- rows are locked in). Driven by the group, whatever the statistics say: the plan is cached per
    -- connection, and one made while the table was small (a new installation's first minute)
    -- read every contact of the project for every group once it was not (a merge join).
    SELECT c.id, c.email, c.subscribed
    FROM (SELECT email FROM proceeding ORDER BY email) p
    CROSS JOIN LATERAL (
      SELECT c.id, c.email, c.subscribed FROM contacts c
      WHERE c.project_id = (SELECT id FROM key_project) AND c.email = p.email
      -- NO KEY: tracks of one contact take turns, but a row that references the contact (a campaign's
      -- email being queued, an event delivery records) takes FOR KEY SHARE, which FOR UPDATE blocked:
      -- tracks waited for those transactions, and a campaign's audience insert could deadlock with them.
      FOR NO KEY UPDATE
    ) c
  ), upserted AS (
    INSERT INTO contacts AS c (id, project_id, email, subscribed, data)
    SELECT p.contact_id, (SELECT id FROM key_project), p.email, COALESCE(p.subscribed, true), p.set_data
    -- Reading "existing" here makes it run (and lock) before the upsert: evaluated after, its
    -- lock would skip the rows this statement just updated and miss their old state.
    FROM proceeding p, (SELECT count(*) FROM existing) AS locked_first
    ORDER BY p.email
    ON CONFLICT (project_id, email) DO UPDATE
      SET subscribed = COALESCE((SELECT p.subscribed FROM proceeding p WHERE p.email = EXCLUDED.email), c.subscribed),
          data = (c.data - ARRAY(
                   SELECT jsonb_array_elements_text(p.unset_keys) FROM proceeding p WHERE p.email = EXCLUDED.email
                 )) || EXCLUDED.data,
          updated_at = now()
    RETURNING c.id, c.project_id, c.email, c.subscribed
  ), changed AS (
    SELECT u.id, u.project_id, u.subscribed, p.sub_event_id
    FROM upserted u JOIN existing e ON e.id = u.id JOIN proceeding p ON p.email = u.email
    WHERE e.subscribed IS DISTINCT FROM u.subscribed
  ), subscription_event AS (${insertSubscriptionEvents('changed', 'track', { id: raw('ch.sub_event_id') })}
  ), tracked AS (
    ${insertEvents(raw('SELECT p.event_id, u.project_id, u.id, p.name, p.event_data FROM upserted u JOIN proceeding p ON p.email = u.email'))}
    RETURNING id, contact_id, created_at
  )
  SELECT i.ord, k.id AS project_id, k.disabled, k.disabled_reason, ${rowHits} AS hits,
         t.contact_id, t.id AS event_id, t.created_at
  FROM key_project k CROSS JOIN input i LEFT JOIN tracked t ON t.id = i.event_id`;
}
