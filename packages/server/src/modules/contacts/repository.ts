import { uuidv7 } from 'uuidv7';
import { prepared, type Queryable } from '../../db/sql.js';
import type { DataChanges } from './data-rules.js';
import { insertSubscriptionEvents, type SubscriptionSource } from './subscription.js';

export interface ContactRow {
  id: string;
  project_id: string;
  email: string;
  subscribed: boolean;
  data: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export const toContactDto = (row: ContactRow) => ({
  id: row.id,
  email: row.email,
  subscribed: row.subscribed,
  data: row.data,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export interface UpsertInput {
  projectId: string;
  email: string;
  /** Explicit value from the request; undefined keeps an existing contact's state. */
  subscribed: boolean | undefined;
  /** State of a contact created by this call when `subscribed` is not given. */
  subscribedIfNew: boolean;
  changes: DataChanges;
  source: SubscriptionSource;
}

export interface UpsertResult {
  contact: ContactRow;
  isNew: boolean;
}

/**
 * Creates or updates a contact by email, recording `contact.subscribed` / `contact.unsubscribed`
 * when an existing contact's state flips, all in one statement. Safe under concurrent calls for
 * one email (ON CONFLICT + row lock). Shared by POST /contacts, track and send. `project` is the
 * SQL of the project id (default the $1 parameter); `guard` a condition the write needs.
 */
export const upsertCtes = ({ project = '$1::uuid', guard = 'true' } = {}) => `
  existing AS (
    SELECT id, subscribed FROM contacts WHERE project_id = ${project} AND email = $2::text FOR UPDATE
  ), upserted AS (
    INSERT INTO contacts AS c (id, project_id, email, subscribed, data)
    SELECT $3::uuid, ${project}, $2, COALESCE($4::boolean, $5::boolean), $6::jsonb
    -- Reading "existing" here makes it run (and lock) before the upsert: evaluated after, its
    -- FOR UPDATE would skip the row this statement just updated and miss the old state.
    FROM (SELECT count(*) FROM existing) AS locked_first
    WHERE ${guard}
    ON CONFLICT (project_id, email) DO UPDATE
      SET subscribed = COALESCE($4::boolean, c.subscribed),
          data = (c.data - $7::text[]) || $6::jsonb,
          updated_at = now()
    RETURNING c.*, (xmax = 0) AS inserted
  ), changed AS (
    SELECT u.id, u.project_id, u.subscribed FROM upserted u JOIN existing e ON e.id = u.id
    WHERE e.subscribed IS DISTINCT FROM u.subscribed
  ), subscription_event AS (${insertSubscriptionEvents('changed', '$8', '$9::uuid')})`;

/** Parameters $1..$9 of upsertCtes ($1, the project id, is unused when `project` is an expression). */
export const upsertParams = (input: UpsertInput) => [
  input.projectId,
  input.email,
  uuidv7(),
  input.subscribed ?? null,
  input.subscribedIfNew,
  JSON.stringify(input.changes.set),
  input.changes.unset,
  input.source,
  uuidv7(),
];

const UPSERT_SQL = `WITH ${upsertCtes()} SELECT * FROM upserted`;

export async function upsertContact(db: Queryable, input: UpsertInput): Promise<UpsertResult> {
  const [row] = await prepared<ContactRow & { inserted: boolean }>(
    db,
    'contacts.upsert',
    UPSERT_SQL,
    upsertParams(input),
  );
  if (!row) throw new Error('contact upsert returned no row');
  const { inserted, ...contact } = row;
  return { contact, isNew: inserted };
}

const UPDATE_SQL = `
  WITH existing AS (
    SELECT id, subscribed FROM contacts WHERE project_id = $1::uuid AND id = $2::uuid FOR UPDATE
  ), updated AS (
    UPDATE contacts c SET
      email = COALESCE($3::text, c.email),
      subscribed = COALESCE($4::boolean, c.subscribed),
      data = (c.data - $6::text[]) || $5::jsonb,
      updated_at = now()
    FROM existing e WHERE c.id = e.id
    RETURNING c.*
  ), changed AS (
    SELECT u.id, u.project_id, u.subscribed FROM updated u JOIN existing e ON e.id = u.id
    WHERE e.subscribed IS DISTINCT FROM u.subscribed
  ), subscription_event AS (${insertSubscriptionEvents('changed', '$7', '$8::uuid')})
  SELECT * FROM updated`;

/** Updates one contact of the project; undefined when it does not exist there. */
export async function updateContact(
  db: Queryable,
  projectId: string,
  id: string,
  patch: { email?: string; subscribed?: boolean; changes: DataChanges; source: SubscriptionSource },
): Promise<ContactRow | undefined> {
  const [row] = await prepared<ContactRow>(db, 'contacts.update', UPDATE_SQL, [
    projectId,
    id,
    patch.email ?? null,
    patch.subscribed ?? null,
    JSON.stringify(patch.changes.set),
    patch.changes.unset,
    patch.source,
    uuidv7(),
  ]);
  return row;
}

export async function deleteContact(db: Queryable, projectId: string, id: string): Promise<boolean> {
  const rows = await prepared(
    db,
    'contacts.delete',
    'DELETE FROM contacts WHERE project_id = $1 AND id = $2 RETURNING id',
    [projectId, id],
  );
  return rows.length > 0;
}
