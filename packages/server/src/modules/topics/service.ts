import {
  type ContactTopicsChange,
  MAX_TOPICS,
  type Topic,
  type TopicCreateInput,
  type TopicDefaultSubscription,
  type TopicUpdateInput,
  type TopicVisibility,
} from '@pigeon/contract';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import type { z } from 'zod';
import { queryRows, sql } from '../../db/query.js';
import { findInProject } from '../../db/scoped.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import { conflict, validationFailed } from '../../kit/errors.js';
import { findUsages } from '../references/public.js';
import { applyTopicChoices, type ContactTopicState, contactTopicStates } from './choices.js';

export interface TopicRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  default_subscription: TopicDefaultSubscription;
  visibility: TopicVisibility;
  created_at: Date;
  updated_at: Date;
}

export const toTopic = (row: TopicRow): z.infer<typeof Topic> => ({
  id: row.id,
  name: row.name,
  description: row.description,
  defaultSubscription: row.default_subscription,
  visibility: row.visibility,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export const findTopic = (db: Queryable, projectId: string, id: string) =>
  findInProject<TopicRow>(db, 'topics', projectId, id, 'Topic');

const nameTaken = (name: string) => conflict(`The project already has a topic named "${name}"`);
const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

export async function createTopic(pool: pg.Pool, projectId: string, input: z.output<typeof TopicCreateInput>) {
  const row = await inTransaction(pool, async (client) => {
    // Serialises creations per project, so two at once cannot both pass the limit.
    await queryRows(client, sql`SELECT pg_advisory_xact_lock(hashtext('topics'), hashtext(${projectId}::text))`);
    const [count] = await queryRows<{ n: number }>(
      client,
      sql`SELECT count(*)::int AS n FROM topics WHERE project_id = ${projectId}::uuid`,
    );
    if ((count?.n ?? 0) >= MAX_TOPICS) {
      throw validationFailed([
        { field: 'name', message: `A project has at most ${MAX_TOPICS} topics`, code: 'too_many_topics' },
      ]);
    }
    const [created] = await queryRows<TopicRow>(
      client,
      sql`INSERT INTO topics (id, project_id, name, description, default_subscription, visibility)
          VALUES (${uuidv7()}::uuid, ${projectId}::uuid, ${input.name}, ${input.description ?? null},
                  ${input.defaultSubscription}, ${input.visibility})
          RETURNING *`,
    ).catch((err) => {
      throw isUniqueViolation(err) ? nameTaken(input.name) : err;
    });
    return created as TopicRow;
  });
  return toTopic(row);
}

export async function listTopics(db: Queryable, projectId: string) {
  const rows = await queryRows<TopicRow>(
    db,
    sql`SELECT * FROM topics WHERE project_id = ${projectId}::uuid ORDER BY lower(name), id`,
  );
  return { data: rows.map(toTopic) };
}

export async function getTopic(db: Queryable, projectId: string, id: string) {
  return toTopic(await findTopic(db, projectId, id));
}

export async function updateTopic(
  db: Queryable,
  projectId: string,
  id: string,
  input: z.output<typeof TopicUpdateInput>,
) {
  await findTopic(db, projectId, id);
  const description = input.description === undefined ? sql`description` : sql`${input.description}`;
  const [row] = await queryRows<TopicRow>(
    db,
    sql`UPDATE topics SET name = COALESCE(${input.name ?? null}, name), description = ${description},
          visibility = COALESCE(${input.visibility ?? null}, visibility), updated_at = now()
        WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid RETURNING *`,
  ).catch((err) => {
    throw isUniqueViolation(err) ? nameTaken(input.name ?? '') : err;
  });
  return toTopic(row as TopicRow);
}

/** 409 while a campaign not yet sent (DRAFT, SCHEDULED, SENDING) or a workflow names the topic. */
export async function deleteTopic(db: Queryable, projectId: string, id: string): Promise<void> {
  await findTopic(db, projectId, id);
  const usages = await findUsages(db, projectId, { type: 'topic', key: id }, { activeOnly: true });
  if (usages.length > 0) {
    const named = usages.map((u) => `${u.ownerType} "${u.name}"`).join(', ');
    throw conflict(`The topic is still used by ${named}`, {
      details: { usages: usages.map(({ ownerType, id: ownerId, name }) => ({ type: ownerType, id: ownerId, name })) },
    });
  }
  await queryRows(db, sql`DELETE FROM topics WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid`);
}

/** GET /contacts/:id/topics: every topic of the project with the contact's state. */
export async function getContactTopics(db: Queryable, projectId: string, contactId: string) {
  await findInProject(db, 'contacts', projectId, contactId, 'Contact');
  return { data: (await contactTopicStates(db, contactId, { publicOnly: false })).map(toContactTopic) };
}

/** PUT /contacts/:id/topics: the listed topics set (422 naming a topic not of this project), the rest kept. */
export async function setContactTopics(
  pool: pg.Pool,
  projectId: string,
  contactId: string,
  input: z.output<typeof ContactTopicsChange>,
) {
  await findInProject(pool, 'contacts', projectId, contactId, 'Contact');
  const ids = [...new Set(input.topics.map((t) => t.topicId))];
  const known = await queryRows<{ id: string }>(
    pool,
    sql`SELECT id FROM topics WHERE project_id = ${projectId}::uuid AND id = ANY(${ids}::uuid[])`,
  );
  const knownIds = new Set(known.map((k) => k.id));
  const unknown = input.topics.findIndex((t) => !knownIds.has(t.topicId));
  if (unknown !== -1) {
    throw validationFailed([
      { field: `topics.${unknown}.topicId`, message: 'No such topic in this project', code: 'not_found' },
    ]);
  }
  await applyTopicChoices(pool, { projectId, contactId }, { choices: input.topics, source: 'api' });
  return { data: (await contactTopicStates(pool, contactId, { publicOnly: false })).map(toContactTopic) };
}

const toContactTopic = (s: ContactTopicState) => ({
  topicId: s.topic_id,
  name: s.name,
  visibility: s.visibility,
  subscribed: s.subscribed,
  chosen: s.chosen,
});

/** A campaign's or workflow step's `topicId`: one of the project's topics, else 422 naming `field`. */
export async function requireTopic(db: Queryable, projectId: string, topicId: string, field: string): Promise<void> {
  const [found] = await queryRows(
    db,
    sql`SELECT 1 FROM topics WHERE project_id = ${projectId}::uuid AND id = ${topicId}::uuid`,
  );
  if (!found) throw validationFailed([{ field, message: 'No such topic in this project', code: 'not_found' }]);
}
