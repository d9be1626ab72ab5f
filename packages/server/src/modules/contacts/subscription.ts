import { raw, type Sql, sql } from '../../db/query.js';

/** Where a subscription change came from; stored in the event's data. */
export type SubscriptionSource = 'api' | 'track' | 'send' | 'import' | 'bulk' | 'link' | 'workflow';

/**
 * SQL fragment shared by every write path that may flip `subscribed`: it inserts the matching
 * event for each row of the CTE `changed` (columns id, project_id, subscribed) in the same
 * statement as the change, so the change and its event commit together or not at all.
 *
 * `id` is the event id (single-row paths pass an app-made v7 id so the event sorts before events
 * the same request records after it; batch paths a column of `changed`); `emailId` the email a
 * subscription link came from, for attribution. The source is a fixed word, written into the text
 * so statements keep one shape per source.
 */
export function insertSubscriptionEvents(
  changed: 'changed',
  source: SubscriptionSource,
  { id = raw('uuidv7_compat()'), emailId = raw('NULL') }: { id?: Sql; emailId?: Sql } = {},
): Sql {
  return sql`
  INSERT INTO events (id, project_id, contact_id, name, data)
  SELECT ${id}, ch.project_id, ch.id,
         CASE WHEN ch.subscribed THEN 'contact.subscribed' ELSE 'contact.unsubscribed' END,
         jsonb_strip_nulls(jsonb_build_object('source', ${raw(`'${source}'`)}::text, 'emailId', ${emailId}::uuid))
  FROM ${raw(changed)} ch`;
}
