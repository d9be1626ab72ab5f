import type { SuppressionReason } from '@pigeon/contract';
import { uuidv7 } from 'uuidv7';
import { preparedRows, queryRows, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { insertSubscriptionEvents, type SubscriptionSource } from '../event-log/public.js';
import type { DataChanges } from './data-rules.js';

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
 * one email (ON CONFLICT + row lock). Shared by POST /contacts, track and send.
 */
export async function upsertContact(db: Queryable, input: UpsertInput): Promise<UpsertResult> {
  const { projectId, email } = input;
  const data = JSON.stringify(input.changes.set);
  const [row] = await preparedRows<ContactRow & { inserted: boolean }>(
    db,
    `contacts.upsert.${input.source}`,
    sql`WITH existing AS (
          SELECT id, subscribed FROM contacts WHERE project_id = ${projectId}::uuid AND email = ${email}::text FOR NO KEY UPDATE
        ), upserted AS (
          INSERT INTO contacts AS c (id, project_id, email, subscribed, data)
          SELECT ${uuidv7()}::uuid, ${projectId}::uuid, ${email}::text,
                 COALESCE(${input.subscribed ?? null}::boolean, ${input.subscribedIfNew}::boolean), ${data}::jsonb
          -- Reading "existing" here makes it run (and lock) before the upsert: evaluated after, its
          -- lock would skip the row this statement just updated and miss the old state.
          FROM (SELECT count(*) FROM existing) AS locked_first
          ON CONFLICT (project_id, email) DO UPDATE
            SET subscribed = COALESCE(${input.subscribed ?? null}::boolean, c.subscribed),
                data = (c.data - ${input.changes.unset}::text[]) || ${data}::jsonb,
                updated_at = now()
          RETURNING c.*, (xmax = 0) AS inserted
        ), changed AS (
          SELECT u.id, u.project_id, u.subscribed FROM upserted u JOIN existing e ON e.id = u.id
          WHERE e.subscribed IS DISTINCT FROM u.subscribed
        ), subscription_event AS (${insertSubscriptionEvents('changed', input.source, { id: sql`${uuidv7()}::uuid` })})
        SELECT * FROM upserted`,
  );
  if (!row) throw new Error('contact upsert returned no row');
  const { inserted, ...contact } = row;
  return { contact, isNew: inserted };
}

/** Updates one contact of the project; undefined when it does not exist there. */
export async function updateContact(
  db: Queryable,
  projectId: string,
  id: string,
  patch: { email?: string; subscribed?: boolean; changes: DataChanges; source: SubscriptionSource },
): Promise<ContactRow | undefined> {
  const [row] = await preparedRows<ContactRow>(
    db,
    `contacts.update.${patch.source}`,
    sql`WITH existing AS (
          SELECT id, subscribed FROM contacts WHERE project_id = ${projectId}::uuid AND id = ${id}::uuid FOR UPDATE
        ), updated AS (
          UPDATE contacts c SET
            email = COALESCE(${patch.email ?? null}::text, c.email),
            subscribed = COALESCE(${patch.subscribed ?? null}::boolean, c.subscribed),
            data = (c.data - ${patch.changes.unset}::text[]) || ${JSON.stringify(patch.changes.set)}::jsonb,
            updated_at = now()
          FROM existing e WHERE c.id = e.id
          RETURNING c.*
        ), changed AS (
          SELECT u.id, u.project_id, u.subscribed FROM updated u JOIN existing e ON e.id = u.id
          WHERE e.subscribed IS DISTINCT FROM u.subscribed
        ), subscription_event AS (${insertSubscriptionEvents('changed', patch.source, { id: sql`${uuidv7()}::uuid` })})
        SELECT * FROM updated`,
  );
  return row;
}

export async function deleteContact(db: Queryable, projectId: string, id: string): Promise<boolean> {
  const rows = await preparedRows(
    db,
    'contacts.delete',
    sql`DELETE FROM contacts WHERE project_id = ${projectId} AND id = ${id} RETURNING id`,
  );
  return rows.length > 0;
}

/** Creates the contacts of `emails` the project does not have yet; answers the emails created. */
export async function createMissingContacts(
  db: Queryable,
  projectId: string,
  emails: string[],
  subscribed: boolean,
): Promise<string[]> {
  const rows = await queryRows<{ email: string }>(
    db,
    sql`INSERT INTO contacts (id, project_id, email, subscribed)
        SELECT uuidv7_compat(), ${projectId}::uuid, e, ${subscribed}
        FROM unnest(${emails}::text[]) AS e
        ON CONFLICT (project_id, email) DO NOTHING RETURNING email`,
  );
  return rows.map((r) => r.email);
}

/**
 * Unsubscribes the project's contact of an address that was just suppressed (a hard bounce or a
 * complaint of the email `emailId`), with its `contact.unsubscribed` event naming the reason.
 */
export async function unsubscribeSuppressed(
  db: Queryable,
  projectId: string,
  email: string,
  reason: SuppressionReason,
  emailId: string,
): Promise<void> {
  await queryRows(
    db,
    sql`WITH changed AS (
       UPDATE contacts SET subscribed = false, updated_at = now()
       WHERE project_id = ${projectId} AND email = ${email.toLowerCase()} AND subscribed
       RETURNING id, project_id, subscribed
     ) ${insertSubscriptionEvents('changed', reason, { emailId: sql`${emailId}` })}`,
  );
}

/**
 * CTEs `changed`, `recorded` for a statement that also reads the contact: sets `subscribed` from
 * a subscription link and records the event only if it changed (the row-level WHERE is re-checked
 * under the row lock, so two simultaneous clicks record one event).
 */
export function subscribeFromLink(contactId: string, subscribed: boolean, emailId: string | null): Sql {
  return sql`changed AS (
      UPDATE contacts SET subscribed = ${subscribed}::boolean, updated_at = now()
      WHERE id = ${contactId}::uuid AND subscribed <> ${subscribed}::boolean RETURNING id, project_id, subscribed
    ), recorded AS (${insertSubscriptionEvents('changed', 'link', { emailId: sql`${emailId}` })})`;
}
