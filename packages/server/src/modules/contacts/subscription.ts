/** Where a subscription change came from; stored in the event's data. */
export type SubscriptionSource = 'api' | 'track' | 'send' | 'import' | 'bulk' | 'link' | 'workflow';

/**
 * SQL fragment shared by every write path that may flip `subscribed`: it inserts the matching
 * event for each row of `changed` (columns id, project_id, subscribed) in the same statement as
 * the change, so the change and its event commit together or not at all.
 *
 * `source` is the SQL of the SubscriptionSource value; `id` the SQL of the event id (single-row
 * paths pass an app-made v7 id so the event sorts before events the same request records after it);
 * `emailId` the SQL of the email a subscription link came from, for attribution.
 */
export const insertSubscriptionEvents = (changed: string, source: string, id = 'uuidv7_compat()', emailId = 'NULL') => `
  INSERT INTO events (id, project_id, contact_id, name, data)
  SELECT ${id}, ch.project_id, ch.id,
         CASE WHEN ch.subscribed THEN 'contact.subscribed' ELSE 'contact.unsubscribed' END,
         jsonb_strip_nulls(jsonb_build_object('source', ${source}::text, 'emailId', ${emailId}::uuid))
  FROM ${changed} ch`;
