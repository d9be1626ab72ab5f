import type { ConditionTree, FieldError, SegmentType } from '@pigeon/contract';
import { queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { AppError } from '../../kit/errors.js';
import type { Ref } from '../references/public.js';
import type { ContactFacts, Evaluation } from './operators.js';
import {
  type ConditionRefs,
  compileTree,
  evaluateTree,
  factsNeeded,
  type PreparedTree,
  prepareCondition,
} from './tree.js';

/** A segment as conditions see it: STATIC ones by their member rows, DYNAMIC ones by their own tree. */
export interface SegmentDef {
  id: string;
  type: SegmentType;
  tree: PreparedTree | null;
}

/** The segments a set of conditions reaches, directly or through each other. */
export type SegmentScope = Map<string, SegmentDef>;

/** How deep segments may refer to segments that refer to segments. */
const MAX_SEGMENT_CHAIN = 10;

/** A condition that cannot be saved: 400 with one entry per problem, each naming its path. */
export function invalidCondition(problems: Array<{ path: string; message: string }>, prefix: string): AppError {
  const errors: FieldError[] = problems.map((p) => ({
    field: `${prefix}.${p.path}`,
    message: p.message,
    code: 'invalid_condition',
  }));
  const first = errors[0] as FieldError;
  return new AppError('invalid', 'INVALID_CONDITION', `${first.field}: ${first.message}`, { errors });
}

/**
 * Loads every segment the trees reach, following DYNAMIC segments' own conditions. Segments of
 * other projects are never found: to a condition they do not exist.
 */
export async function loadScope(db: Queryable, projectId: string, trees: PreparedTree[]): Promise<SegmentScope> {
  const scope: SegmentScope = new Map();
  let pending = [...factsNeeded(trees).segments];
  for (let level = 0; pending.length > 0 && level <= MAX_SEGMENT_CHAIN; level++) {
    const rows = await queryRows<{ id: string; type: SegmentType; condition: ConditionTree | null }>(
      db,
      sql`SELECT id, type, condition FROM segments WHERE project_id = ${projectId} AND id = ANY(${pending}::uuid[])`,
    );
    const next = new Set<string>();
    for (const row of rows) {
      const tree = row.condition ? prepareCondition(row.condition).tree : null;
      scope.set(row.id, { id: row.id, type: row.type, tree });
      if (tree) for (const id of factsNeeded([tree]).segments) if (!scope.has(id)) next.add(id);
    }
    pending = [...next];
  }
  return scope;
}

/** Segment ids reachable from one segment id through DYNAMIC conditions (itself excluded). */
function reachable(scope: SegmentScope, from: string): Set<string> {
  const seen = new Set<string>();
  const stack = [from];
  while (stack.length > 0) {
    const tree = scope.get(stack.pop() as string)?.tree;
    if (!tree) continue;
    for (const id of factsNeeded([tree]).segments) {
      if (!seen.has(id)) {
        seen.add(id);
        stack.push(id);
      }
    }
  }
  return seen;
}

/** A condition's references as reference-index rows. */
export const refsOf = (refs: ConditionRefs): Ref[] => [
  ...[...refs.fields].map((key) => ({ type: 'field' as const, key })),
  ...[...refs.events].map((key) => ({ type: 'event' as const, key })),
  ...[...refs.segments.keys()].map((key) => ({ type: 'segment' as const, key })),
];

export interface CheckedCondition {
  tree: PreparedTree;
  refs: ConditionRefs;
  scope: SegmentScope;
}

/**
 * Everything that makes a condition unsaveable, as one 400: unknown fields, operators that do
 * not fit their field, values of the wrong type, units where none apply, segments that do not
 * exist in the project, and segments that lead back to `selfId`.
 */
export async function checkCondition(
  db: Queryable,
  projectId: string,
  condition: ConditionTree,
  opts: { selfId?: string; prefix?: string; workflow?: boolean } = {},
): Promise<CheckedCondition> {
  const prefix = opts.prefix ?? 'condition';
  const { tree, problems, refs } = prepareCondition(condition, { workflow: opts.workflow });
  if (problems.length > 0) throw invalidCondition(problems, prefix);
  const scope = await loadScope(db, projectId, [tree]);
  for (const [id, path] of refs.segments) {
    if (!scope.has(id)) problems.push({ path, message: `Segment ${id} does not exist in this project` });
    else if (id === opts.selfId) problems.push({ path, message: 'A segment cannot refer to itself' });
    else if (opts.selfId && reachable(scope, id).has(opts.selfId)) {
      problems.push({ path, message: `Segment ${id} refers back to this segment through its own condition` });
    }
  }
  if (problems.length > 0) throw invalidCondition(problems, prefix);
  return { tree, refs, scope };
}

/** Both evaluators' view of the scope at one instant. */
export function evaluation(scope: SegmentScope, now = Date.now()): Evaluation {
  const ev: Evaluation = {
    now,
    memberOfSql(id) {
      const def = scope.get(id);
      if (!def) return raw('false');
      if (def.tree) return compileTree(def.tree, ev);
      return sql`EXISTS (SELECT 1 FROM segment_members m WHERE m.segment_id = ${id}::uuid AND m.contact_id = c.id)`;
    },
    memberOf(id, facts) {
      const def = scope.get(id);
      if (!def) return false;
      return def.tree ? evaluateTree(def.tree, facts, ev) : facts.staticSegments.has(id);
    },
  };
  return ev;
}

/** The condition as a boolean SQL expression over contacts `c` of the project. */
export const conditionSql = (tree: PreparedTree, scope: SegmentScope, now?: number): Sql =>
  compileTree(tree, evaluation(scope, now));

/** Every tree that evaluating `trees` may run: theirs and those of the DYNAMIC segments they reach. */
export const treesInScope = (trees: PreparedTree[], scope: SegmentScope) => [
  ...trees,
  ...[...scope.values()].flatMap((def) => (def.tree ? [def.tree] : [])),
];

interface ContactFactRow {
  id: string;
  email: string;
  subscribed: boolean;
  data: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

/**
 * Loads what the in-memory evaluator needs about some contacts, in three set-based queries: the
 * contacts, first and last times of the event names the trees use, and STATIC memberships.
 * Contacts that no longer exist are absent from the map.
 */
export async function loadFacts(
  db: Queryable,
  projectId: string,
  contactIds: string[],
  trees: PreparedTree[],
  scope: SegmentScope,
): Promise<Map<string, ContactFacts>> {
  const facts = new Map<string, ContactFacts>();
  if (contactIds.length === 0) return facts;
  const needed = factsNeeded(treesInScope(trees, scope));
  const rows = await queryRows<ContactFactRow>(
    db,
    sql`SELECT id, email, subscribed, data, created_at, updated_at FROM contacts
     WHERE project_id = ${projectId} AND id = ANY(${contactIds}::uuid[])`,
  );
  for (const row of rows) {
    facts.set(row.id, {
      id: row.id,
      email: row.email,
      subscribed: row.subscribed,
      data: row.data,
      createdAt: row.created_at.getTime(),
      updatedAt: row.updated_at.getTime(),
      events: new Map(),
      staticSegments: new Set(),
    });
  }
  if (needed.events.size > 0) {
    const events = await queryRows<{ contact_id: string; name: string; first: Date; last: Date }>(
      db,
      sql`SELECT contact_id, name, min(created_at) AS first, max(created_at) AS last FROM events
       WHERE project_id = ${projectId} AND contact_id = ANY(${contactIds}::uuid[]) AND name = ANY(${[...needed.events]}::text[]) GROUP BY 1, 2`,
    );
    for (const e of events)
      facts.get(e.contact_id)?.events.set(e.name, { first: e.first.getTime(), last: e.last.getTime() });
  }
  const statics = [...needed.segments].filter((id) => scope.get(id)?.type === 'STATIC');
  if (statics.length > 0) {
    const members = await queryRows<{ contact_id: string; segment_id: string }>(
      db,
      sql`SELECT contact_id, segment_id FROM segment_members WHERE segment_id = ANY(${statics}::uuid[]) AND contact_id = ANY(${contactIds}::uuid[])`,
    );
    for (const m of members) facts.get(m.contact_id)?.staticSegments.add(m.segment_id);
  }
  return facts;
}
