import type { AudienceCountInput, CampaignInput, ConditionTree, ContentType } from '@pigeon/contract';
import type pg from 'pg';
import type { z } from 'zod';
import { queryRows, raw, type Sql, sql } from '../../db/query.js';
import { type Queryable, withQueryLimits } from '../../db/sql.js';
import { validationFailed } from '../../kit/errors.js';
import { checkCondition, conditionSql, refsOf } from '../conditions/public.js';
import type { Ref } from '../references/public.js';
import { topicMemberCondition } from '../topics/public.js';

type Input = z.output<typeof CampaignInput>;

export interface Audience {
  type: Input['audienceType'];
  segmentId: string | null;
  condition: ConditionTree | null;
}

const memberOf = (segmentId: string): ConditionTree => ({
  logic: 'AND',
  groups: [{ filters: [{ field: `segment.${segmentId}`, operator: 'memberOfSegment' }] }],
});

/**
 * The audience as saved: SEGMENT needs a segment of this project, FILTERED a valid condition
 * (400 naming the bad filter), ALL neither (anything given is dropped). Returns it with what it
 * references, for the reference index.
 */
export async function checkAudience(
  db: Queryable,
  projectId: string,
  input: Pick<Input, 'audienceType' | 'segmentId' | 'audienceCondition'>,
): Promise<{ audience: Audience; refs: Ref[] }> {
  if (input.audienceType === 'SEGMENT') {
    if (!input.segmentId) {
      throw validationFailed([
        { field: 'segmentId', message: 'Required when audienceType is SEGMENT', code: 'invalid_type' },
      ]);
    }
    const found = await queryRows(
      db,
      sql`SELECT 1 FROM segments WHERE project_id = ${projectId}::uuid AND id = ${input.segmentId}::uuid`,
    );
    if (found.length === 0) {
      throw validationFailed([{ field: 'segmentId', message: 'No such segment in this project', code: 'not_found' }]);
    }
    return {
      audience: { type: 'SEGMENT', segmentId: input.segmentId, condition: null },
      refs: [{ type: 'segment', key: input.segmentId }],
    };
  }
  if (input.audienceType === 'FILTERED') {
    if (!input.audienceCondition) {
      throw validationFailed([
        { field: 'audienceCondition', message: 'Required when audienceType is FILTERED', code: 'invalid_type' },
      ]);
    }
    const checked = await checkCondition(db, projectId, input.audienceCondition, { prefix: 'audienceCondition' });
    return {
      audience: { type: 'FILTERED', segmentId: null, condition: input.audienceCondition },
      refs: refsOf(checked.refs),
    };
  }
  return { audience: { type: 'ALL', segmentId: null, condition: null }, refs: [] };
}

/** The audience as a boolean SQL expression over contacts `c` of the project (checked again: a segment may be gone). */
export async function audienceSql(db: Queryable, projectId: string, audience: Audience): Promise<Sql> {
  if (audience.type === 'ALL') return raw('true');
  const tree = audience.type === 'SEGMENT' ? memberOf(audience.segmentId ?? '') : (audience.condition as ConditionTree);
  const prefix = audience.type === 'SEGMENT' ? 'segmentId' : 'audienceCondition';
  const checked = await checkCondition(db, projectId, tree, { prefix });
  return sql`(${conditionSql(checked.tree, checked.scope)})`;
}

/**
 * The contacts `c` a campaign of `type` reaches if it is sent now: the audience, subscribed ones
 * only unless TRANSACTIONAL, suppressed addresses left out. With a topic, whatever the type, only
 * contacts subscribed both to Pigeon's mail and to the topic. Sending freezes exactly these.
 */
export async function recipientsSql(
  db: Queryable,
  projectId: string,
  audience: Audience,
  send: { type: ContentType; topicId: string | null },
): Promise<Sql> {
  const inAudience = await audienceSql(db, projectId, audience);
  const inTopic = send.topicId ? await topicMemberCondition(db, projectId, send.topicId) : sql`true`;
  if (!inTopic) {
    throw validationFailed([{ field: 'topicId', message: 'No such topic in this project', code: 'not_found' }]);
  }
  const subscribedOnly = send.type === 'TRANSACTIONAL' && !send.topicId ? sql`true` : sql`c.subscribed`;
  return sql`c.project_id = ${projectId}::uuid AND ${subscribedOnly} AND ${inAudience} AND ${inTopic}
    AND NOT EXISTS (SELECT 1 FROM suppressions s WHERE s.project_id = c.project_id AND s.email = c.email)`;
}

/** How many contacts an audience would reach if sent now (the console's count before sending). */
export async function countAudience(
  pool: pg.Pool,
  projectId: string,
  input: z.output<typeof AudienceCountInput>,
  limits: { timeoutMs: number; workMemMb: number },
) {
  const { audience } = await checkAudience(pool, projectId, input);
  return withQueryLimits(pool, limits, async (client) => {
    const recipients = await recipientsSql(client, projectId, audience, {
      type: input.type,
      topicId: input.topicId ?? null,
    });
    const [row] = await queryRows<{ n: number }>(
      client,
      sql`SELECT count(*)::int AS n FROM contacts c WHERE ${recipients}`,
    );
    return { count: row?.n ?? 0 };
  });
}
