import type { TopicDefaultSubscription } from '@pigeon/contract';
import { queryRows, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

/**
 * Whether the contact `c` is subscribed to the topic, as a condition over many contacts (a
 * campaign's freeze and its audience count): the topic's default is known, so the condition is a
 * plain (anti-)join on `contact_topics`' primary key, never a per-row lookup of the topic.
 */
export function topicMemberSql(topic: { id: string; defaultSubscription: TopicDefaultSubscription }): Sql {
  return topic.defaultSubscription === 'OPT_IN'
    ? sql`NOT EXISTS (SELECT 1 FROM contact_topics ct
          WHERE ct.topic_id = ${topic.id}::uuid AND ct.contact_id = c.id AND NOT ct.subscribed)`
    : sql`EXISTS (SELECT 1 FROM contact_topics ct
          WHERE ct.topic_id = ${topic.id}::uuid AND ct.contact_id = c.id AND ct.subscribed)`;
}

/** `topicMemberSql` of a topic of the project; undefined when there is no such topic. */
export async function topicMemberCondition(
  db: Queryable,
  projectId: string,
  topicId: string,
): Promise<Sql | undefined> {
  const [topic] = await queryRows<{ id: string; defaultSubscription: TopicDefaultSubscription }>(
    db,
    sql`SELECT id, default_subscription AS "defaultSubscription" FROM topics
        WHERE project_id = ${projectId}::uuid AND id = ${topicId}::uuid`,
  );
  return topic ? topicMemberSql(topic) : undefined;
}

/**
 * Whether one contact is subscribed to a topic (both SQL expressions), as one expression: their
 * choice, else the topic's default; false when the topic is gone.
 */
export const subscribedToTopicSql = (contactId: Sql, topicId: Sql): Sql =>
  sql`COALESCE((SELECT ct.subscribed FROM contact_topics ct WHERE ct.topic_id = ${topicId} AND ct.contact_id = ${contactId}),
     (SELECT t.default_subscription = 'OPT_IN' FROM topics t WHERE t.id = ${topicId}), false)`;

/** Whether the contact is subscribed to the topic (a workflow step's check). */
export async function isSubscribedToTopic(db: Queryable, contactId: string, topicId: string): Promise<boolean> {
  const [row] = await queryRows<{ subscribed: boolean }>(
    db,
    sql`SELECT ${subscribedToTopicSql(sql`${contactId}::uuid`, sql`${topicId}::uuid`)} AS subscribed`,
  );
  return row?.subscribed === true;
}
