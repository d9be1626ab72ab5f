import type { TopicVisibility } from '@pigeon/contract';
import type pg from 'pg';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import { insertTopicEvents, type TopicChoiceSource } from '../event-log/public.js';

/** One topic as one contact has it: their choice, else the topic's default. */
export interface ContactTopicState {
  topic_id: string;
  name: string;
  description: string | null;
  visibility: TopicVisibility;
  subscribed: boolean;
  chosen: boolean;
}

/** The project's topics (only PUBLIC ones with `publicOnly`, as the preference page shows them) for a contact. */
export async function contactTopicStates(
  db: Queryable,
  contactId: string,
  { publicOnly }: { publicOnly: boolean },
): Promise<ContactTopicState[]> {
  return queryRows<ContactTopicState>(
    db,
    sql`SELECT t.id AS topic_id, t.name, t.description, t.visibility,
               COALESCE(ct.subscribed, t.default_subscription = 'OPT_IN') AS subscribed, ct.subscribed IS NOT NULL AS chosen
        FROM contacts c JOIN topics t ON t.project_id = c.project_id
        LEFT JOIN contact_topics ct ON ct.topic_id = t.id AND ct.contact_id = c.id
        WHERE c.id = ${contactId}::uuid AND (NOT ${publicOnly}::boolean OR t.visibility = 'PUBLIC')
        ORDER BY lower(t.name), t.id`,
  );
}

export interface TopicChoice {
  topicId: string;
  subscribed: boolean;
}

/**
 * Records a contact's choices (topics of other projects are ignored) and a `contact.topic.*`
 * event for each topic whose state changed. The contact's row is locked first, so choices made at
 * the same moment (two clicks, the page and a one-click POST) are applied one after the other and
 * each change is recorded once. Returns the topics whose state changed.
 */
export async function applyTopicChoices(
  pool: pg.Pool,
  scope: { projectId: string; contactId: string },
  input: { choices: TopicChoice[]; source: TopicChoiceSource; emailId?: string | null },
): Promise<Array<{ topic_id: string; subscribed: boolean }>> {
  // The last choice for a topic wins (an upsert cannot touch one row twice).
  const last = new Map(input.choices.map((c) => [c.topicId, c.subscribed]));
  if (last.size === 0) return [];
  return inTransaction(pool, async (client) => {
    const [contact] = await queryRows(
      client,
      sql`SELECT 1 FROM contacts WHERE id = ${scope.contactId}::uuid AND project_id = ${scope.projectId}::uuid
          FOR NO KEY UPDATE`,
    );
    if (!contact) return [];
    return queryRows<{ topic_id: string; subscribed: boolean }>(
      client,
      sql`WITH wanted AS (
            SELECT t.id AS topic_id, t.name AS topic_name, x.subscribed,
                   COALESCE(ct.subscribed, t.default_subscription = 'OPT_IN') AS was
            FROM unnest(${[...last.keys()]}::uuid[], ${[...last.values()]}::boolean[]) AS x(topic_id, subscribed)
            JOIN topics t ON t.id = x.topic_id AND t.project_id = ${scope.projectId}::uuid
            LEFT JOIN contact_topics ct ON ct.topic_id = t.id AND ct.contact_id = ${scope.contactId}::uuid
          ), saved AS (
            INSERT INTO contact_topics (topic_id, contact_id, project_id, subscribed)
            SELECT topic_id, ${scope.contactId}::uuid, ${scope.projectId}::uuid, subscribed FROM wanted
            ON CONFLICT (topic_id, contact_id) DO UPDATE SET subscribed = EXCLUDED.subscribed, updated_at = now()
          ), moved AS (
            SELECT ${scope.projectId}::uuid AS project_id, ${scope.contactId}::uuid AS contact_id,
                   topic_id, topic_name, subscribed
            FROM wanted WHERE subscribed <> was
          ), recorded AS (${insertTopicEvents('moved', input.source, input.emailId ?? null)})
          SELECT topic_id, subscribed FROM moved`,
    );
  });
}
