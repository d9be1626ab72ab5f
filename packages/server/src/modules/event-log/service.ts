import { SuppressionReason } from '@pigeon/contract';
import { join, queryRows, raw, runStatement, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

/**
 * The `events` table's one writer (ARCHITECTURE.md "Table owners"). Every event row goes in
 * through `insertEvents`, and every payload Pigeon records itself is built here:
 *
 * - `insertEvents(select)` is the SQL form: hot statements (the track statement, the delivery
 *   loop, open and click tracking, membership and subscription changes) embed it as a CTE, so an
 *   event still commits with the change it records in one round trip and one prepared statement;
 * - `recordEmailEvent(db, …)` is the function form for ordinary callers (delivery feedback).
 *
 * This module sits below every module that records events (contacts, segments, engagement,
 * deliverability, emails, events) and imports none of them.
 */

/** `select` yields rows of (id, project_id, contact_id, name, data); append RETURNING if needed. */
export function insertEvents(select: Sql): Sql {
  return sql`INSERT INTO events (id, project_id, contact_id, name, data) ${select}`;
}

/** Where a subscription change came from; stored in the event's data. */
export type SubscriptionSource = 'api' | 'track' | 'send' | 'import' | 'bulk' | 'link' | 'workflow';
const quoted = (word: string) => raw(`'${word.replace(/'/g, "''")}'`);

/**
 * `contact.subscribed` / `contact.unsubscribed` for each row of the CTE `changed` (columns id,
 * project_id, subscribed), embedded in the statement that flips `subscribed`, so the change and
 * its event commit together or not at all.
 *
 * `id` is the event id (single-row paths pass an app-made v7 id so the event sorts before events
 * the same request records after it; batch paths a column of `changed`); `emailId` the email a
 * subscription link or a suppression came from, for attribution. The source is a fixed word,
 * written into the text so statements keep one shape per source; a suppression also names itself
 * as the `reason`.
 */
export function insertSubscriptionEvents(
  changed: 'changed',
  source: SubscriptionSource | SuppressionReason,
  { id = raw('uuidv7_compat()'), emailId = raw('NULL') }: { id?: Sql; emailId?: Sql } = {},
): Sql {
  // A suppression that unsubscribed the contact names itself as the reason too.
  const reason = SuppressionReason.safeParse(source).success ? quoted(source) : raw('NULL');
  return insertEvents(sql`
  SELECT ${id}, ch.project_id, ch.id,
         CASE WHEN ch.subscribed THEN 'contact.subscribed' ELSE 'contact.unsubscribed' END,
         jsonb_strip_nulls(jsonb_build_object('source', ${quoted(source)}::text, 'reason', ${reason}::text, 'emailId', ${emailId}::uuid))
  FROM ${raw(changed)} ch`);
}

/** Where a contact's topic choice came from (the event's `source`). */
export type TopicChoiceSource = 'api' | 'link' | 'one_click';

/**
 * `contact.topic.subscribed` / `contact.topic.unsubscribed` for each row of the CTE `moved`
 * (project_id, contact_id, topic_id, topic_name, subscribed): embedded in the statement that
 * records the choices, so a change and its event commit together. `emailId`: the email whose
 * link made the change, for attribution.
 */
export function insertTopicEvents(moved: 'moved', source: TopicChoiceSource, emailId: string | null = null): Sql {
  return insertEvents(sql`
  SELECT uuidv7_compat(), m.project_id, m.contact_id,
         CASE WHEN m.subscribed THEN 'contact.topic.subscribed' ELSE 'contact.topic.unsubscribed' END,
         jsonb_strip_nulls(jsonb_build_object('topicId', m.topic_id, 'topicName', m.topic_name,
           'source', ${quoted(source)}::text, 'emailId', ${emailId}::uuid))
  FROM ${raw(moved)} m`);
}

/**
 * `segment.<slug>.entry` / `.exit` for each row of the CTE `moves` (segment_id, contact_id, move)
 * of segments that track membership, when `emit`.
 */
export function insertSegmentMoveEvents(moves: 'moves', projectId: string, emit: boolean): Sql {
  return insertEvents(sql`
      SELECT uuidv7_compat(), ${projectId}::uuid, m.contact_id, 'segment.' || s.slug || '.' || m.move,
             jsonb_build_object('segmentId', s.id, 'segmentName', s.name, 'slug', s.slug)
      FROM ${raw(moves)} m JOIN segments s ON s.id = m.segment_id
      WHERE s.track_membership AND ${emit}::boolean`);
}

/** What an `email.*` event adds to the email's own fields: key → SQL value (keys are fixed words). */
export type EmailEventExtra = Record<string, Sql>;

/**
 * `email.*` events (data: emailId, subject, templateId and `extra`) for each email row aliased `e`
 * in `from` (a CTE of updated `emails` rows, or `emails e`) that has a contact, narrowed by `where`;
 * `name` is a fixed event name or an SQL expression (several names per row: a column of a joined
 * VALUES list).
 */
export function insertEmailEvents({
  from,
  name,
  extra = {},
  where = raw('true'),
}: {
  from: Sql;
  name: Sql;
  extra?: EmailEventExtra;
  where?: Sql;
}): Sql {
  const pairs = Object.entries(extra).map(([key, value]) => sql`, ${quoted(key)}, ${value}`);
  return insertEvents(sql`
  SELECT uuidv7_compat(), e.project_id, e.contact_id, ${name},
         jsonb_strip_nulls(jsonb_build_object('emailId', e.id, 'subject', e.subject, 'templateId', e.template_id${join(pairs, '')}))
  FROM ${from} WHERE e.contact_id IS NOT NULL AND ${where}`);
}

/** Records one `email.*` event about an email (its fields read in the same statement). */
export async function recordEmailEvent(
  db: Queryable,
  emailId: string,
  name: string,
  extra: EmailEventExtra = {},
): Promise<void> {
  await queryRows(
    db,
    insertEmailEvents({ from: raw('emails e'), name: sql`${name}`, extra, where: sql`e.id = ${emailId}::uuid` }),
  );
}

/**
 * Deleting every event of one name in batches (the events API's delete-by-name job): the count of
 * what is left, and one batch of at most `size` rows.
 */
export function eventsNamed(projectId: string, name: string): { count: Sql; batch: (size: number) => Sql } {
  return {
    count: sql`SELECT count(*)::int AS n FROM events WHERE project_id = ${projectId} AND name = ${name}`,
    batch: (size) =>
      sql`DELETE FROM events WHERE id IN (SELECT id FROM events WHERE project_id = ${projectId} AND name = ${name} LIMIT ${size})`,
  };
}

/**
 * Retention's expiry (modules/retention decides the cut-off): deletes at most `batch` of the
 * project's events older than the id `before`; answers how many. Repeated until it deletes fewer.
 */
export function deleteExpiredEvents(db: Queryable, projectId: string, before: string, batch: number): Promise<number> {
  return runStatement(
    db,
    sql`DELETE FROM events WHERE id IN (SELECT id FROM events
          WHERE project_id = ${projectId}::uuid AND id < ${before}::uuid LIMIT ${batch})`,
  );
}
