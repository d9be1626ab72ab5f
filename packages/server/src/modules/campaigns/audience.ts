import type { CampaignInput, ConditionTree } from '@pigeon/contract';
import type { z } from 'zod';
import { queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { validationFailed } from '../../http/errors.js';
import { checkCondition, conditionSql, refsOf } from '../conditions/engine.js';
import type { Ref } from '../references/service.js';

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
  input: Input,
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
