import type { ConditionTree } from '@pigeon/contract';
import type pg from 'pg';
import { queryRows, sql } from '../../db/query.js';
import type { ContactChange, FeedConsumer } from '../change-feed/public.js';
import { evaluateTree, evaluation, loadFacts, loadScope, prepareCondition } from '../conditions/public.js';
import { applyMoves, type MemberMove } from './membership.js';

interface TrackedRow {
  id: string;
  condition: ConditionTree;
}

/**
 * The change feed's first consumer: contacts that changed are re-evaluated in memory against
 * every DYNAMIC segment of their project that tracks membership; the differences become member
 * rows and `segment.<slug>.entry` / `.exit` events (which enter the feed in turn, so workflows
 * can start from them).
 */
export const trackedSegmentsConsumer: FeedConsumer = {
  name: 'segments.membership',
  // Only changes that can move a contact reach the process: none of a project without a tracked
  // segment; of the others, every data, subscription or email change, the events whose name a
  // segment's condition reads (the reference index) and, when a segment's condition names another
  // segment, the membership events (a static member edit). So a plain track's event and the
  // entry/exit events this consumer records itself cost a lookup in the database, not an evaluation.
  wants: sql`EXISTS (SELECT 1 FROM segments s
                     WHERE s.project_id = ch.project_id AND s.type = 'DYNAMIC' AND s.track_membership)
             AND (ch.kind <> 'event'
                  OR EXISTS (SELECT 1 FROM resource_refs r
                             WHERE r.project_id = ch.project_id AND r.ref_type = 'event' AND r.ref_key = ch.name
                               AND r.owner_type = 'segment')
                  OR (ch.name LIKE 'segment.%' AND EXISTS (
                        SELECT 1 FROM resource_refs r
                        WHERE r.project_id = ch.project_id AND r.ref_type = 'segment' AND r.owner_type = 'segment')))`,
  async handle(client, changes) {
    for (const [projectId, contactIds] of contactsByProject(changes)) {
      await reevaluate(client, projectId, contactIds);
    }
  },
};

function contactsByProject(changes: ContactChange[]): Map<string, string[]> {
  const byProject = new Map<string, Set<string>>();
  for (const change of changes) {
    const set = byProject.get(change.projectId) ?? new Set();
    set.add(change.contactId);
    byProject.set(change.projectId, set);
  }
  return new Map([...byProject].map(([project, ids]) => [project, [...ids]]));
}

export async function reevaluate(
  client: pg.PoolClient,
  projectId: string,
  contactIds: string[],
): Promise<MemberMove[]> {
  const tracked = await queryRows<TrackedRow>(
    client,
    sql`SELECT id, condition FROM segments WHERE project_id = ${projectId} AND type = 'DYNAMIC' AND track_membership`,
  );
  if (tracked.length === 0) return [];
  const segments = tracked.map((row) => ({ id: row.id, tree: prepareCondition(row.condition).tree }));
  const trees = segments.map((s) => s.tree);
  const scope = await loadScope(client, projectId, trees);
  const facts = await loadFacts(client, projectId, contactIds, trees, scope);
  const current = await queryRows<{ segment_id: string; contact_id: string }>(
    client,
    sql`SELECT segment_id, contact_id FROM segment_members WHERE segment_id = ANY(${segments.map((s) => s.id)}::uuid[]) AND contact_id = ANY(${contactIds}::uuid[])`,
  );
  const isMember = new Set(current.map((r) => `${r.segment_id}:${r.contact_id}`));
  const ev = evaluation(scope);
  const moves: MemberMove[] = [];
  for (const contactId of contactIds) {
    const contact = facts.get(contactId);
    if (!contact) continue; // deleted: its member rows went with it
    for (const segment of segments) {
      const matches = evaluateTree(segment.tree, contact, ev);
      const was = isMember.has(`${segment.id}:${contactId}`);
      if (matches !== was) moves.push({ segmentId: segment.id, contactId, move: matches ? 'entry' : 'exit' });
    }
  }
  return applyMoves(client, projectId, moves);
}
