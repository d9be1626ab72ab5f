import type { ConditionFilter, ConditionLogic, ConditionTree } from '@pigeon/contract';
import { and, or, type Sql } from '../../db/query.js';
import { type FieldOptions, type FieldRef, parseField } from './fields.js';
import {
  type ContactFacts,
  type Evaluation,
  type FilterValue,
  operatorFor,
  operatorsOf,
  type ValueRule,
} from './operators.js';
import { MAX_WINDOW_MS, parseIsoDate, UNIT_MS } from './values.js';

export interface PreparedFilter {
  field: FieldRef;
  value: FilterValue;
  op: NonNullable<ReturnType<typeof operatorFor>>;
}
export interface PreparedTree {
  logic: ConditionLogic;
  groups: Array<{ filters: PreparedFilter[]; conditions?: PreparedTree }>;
}

/** A problem with one part of a condition; `path` is dotted from the tree's root (`groups.0.filters.1.operator`). */
export interface ConditionProblem {
  path: string;
  message: string;
}

/** What a condition refers to: the reference index stores these. */
export interface ConditionRefs {
  fields: Set<string>;
  events: Set<string>;
  segments: Map<string, string>;
}

export interface Prepared {
  tree: PreparedTree;
  problems: ConditionProblem[];
  refs: ConditionRefs;
}

/**
 * Validates a condition tree and turns it into what both evaluators run. `workflow` admits the
 * execution-context fields of workflow CONDITION steps, which only the in-memory evaluator reads.
 */
export function prepareCondition(tree: ConditionTree, opts: { workflow?: boolean } = {}): Prepared {
  const problems: ConditionProblem[] = [];
  const refs: ConditionRefs = { fields: new Set(), events: new Set(), segments: new Map() };
  const walk = (node: ConditionTree, path: string): PreparedTree => ({
    logic: node.logic,
    groups: node.groups.map((group, g) => {
      const groupPath = `${path}groups.${g}`;
      const filters = group.filters.flatMap((filter, f) => {
        const fieldOpts = opts.workflow ? { workflow: { operator: filter.operator } } : {};
        const prepared = prepareFilter(filter, `${groupPath}.filters.${f}`, problems, refs, fieldOpts);
        return prepared ? [prepared] : [];
      });
      return group.conditions
        ? { filters, conditions: walk(group.conditions, `${groupPath}.conditions.`) }
        : { filters };
    }),
  });
  return { tree: walk(tree, ''), problems, refs };
}

function prepareFilter(
  filter: ConditionFilter,
  path: string,
  problems: ConditionProblem[],
  refs: ConditionRefs,
  fieldOpts: FieldOptions,
): PreparedFilter | undefined {
  const field = parseField(filter.field, fieldOpts);
  if ('error' in field) {
    problems.push({ path: `${path}.field`, message: field.error });
    return undefined;
  }
  const op = operatorFor(field, filter.operator);
  if (!op) {
    problems.push({
      path: `${path}.operator`,
      message: `"${filter.operator}" does not apply to ${filter.field}; use ${operatorsOf(field.kind).join(', ')}`,
    });
    return undefined;
  }
  const value = checkValue(op.takes, filter, path, problems);
  if (!value) return undefined;
  if (field.kind === 'event') refs.events.add(field.name);
  else if (field.kind === 'segment') refs.segments.set(field.id, `${path}.field`);
  else if (field.kind === 'data') {
    if (field.source !== 'context') refs.fields.add(`data.${field.path.join('.')}`);
  } else refs.fields.add(filter.field.replace(/^contact\./, ''));
  return { field, value, op };
}

function checkValue(
  rule: ValueRule,
  filter: ConditionFilter,
  path: string,
  problems: ConditionProblem[],
): FilterValue | undefined {
  const fail = (message: string, at = 'value') => {
    problems.push({ path: `${path}.${at}`, message: `${filter.operator}: ${message}` });
    return undefined;
  };
  if (rule === 'amount' && filter.unit === undefined)
    return fail('needs a unit (seconds, minutes, hours or days)', 'unit');
  if (rule !== 'amount' && filter.unit !== undefined) return fail('a unit does not apply here', 'unit');
  const v = filter.value;
  const isText = typeof v === 'string' && v.length > 0 && v.length <= 1000;
  const isNumber = typeof v === 'number' && Number.isFinite(v);
  switch (rule) {
    case 'none':
      return v === undefined || v === null || v === '' ? { raw: null } : fail('takes no value');
    case 'string':
      return isText ? { raw: v } : fail('needs a text value of 1 to 1000 characters');
    case 'boolean':
      return typeof v === 'boolean' ? { raw: v } : fail('needs true or false');
    case 'scalar':
      return isText || isNumber || typeof v === 'boolean'
        ? { raw: v }
        : fail('needs a text, number or boolean value (use exists / notExists for missing values)');
    case 'numberOrDate': {
      if (isNumber) return { raw: v };
      const instant = parseIsoDate(v);
      return instant === undefined ? fail('needs a number or an ISO 8601 date') : { raw: v, at: instant };
    }
    case 'date': {
      const instant = parseIsoDate(v);
      return instant === undefined ? fail('needs an ISO 8601 date') : { raw: v, at: instant };
    }
    case 'amount': {
      const windowMs = isNumber ? (v as number) * UNIT_MS[filter.unit ?? 'days'] : Number.NaN;
      if (!(windowMs > 0)) return fail('needs a positive number of units');
      return windowMs > MAX_WINDOW_MS ? fail('the window is longer than 100 years') : { raw: v, windowMs };
    }
  }
}

/** The tree as one boolean SQL expression over the contact row `c`. */
export function compileTree(tree: PreparedTree, ev: Evaluation): Sql {
  const groups = tree.groups.map((group) =>
    and([
      ...group.filters.map((f) => {
        if (f.field.kind === 'data' && f.field.source === 'context') {
          throw new Error('workflow context fields are evaluated in memory only');
        }
        return f.op.sql(f.field, f.value, ev);
      }),
      ...(group.conditions ? [compileTree(group.conditions, ev)] : []),
    ]),
  );
  return tree.logic === 'AND' ? and(groups) : or(groups);
}

/** The same tree evaluated for one contact in memory. */
export function evaluateTree(tree: PreparedTree, facts: ContactFacts, ev: Evaluation): boolean {
  const groupMatches = (group: PreparedTree['groups'][number]) =>
    group.filters.every((f) => f.op.test(f.field, f.value, facts, ev)) &&
    (!group.conditions || evaluateTree(group.conditions, facts, ev));
  return tree.logic === 'AND' ? tree.groups.every(groupMatches) : tree.groups.some(groupMatches);
}

/** Event names and STATIC segment ids whose facts evaluating these trees needs. */
export function factsNeeded(trees: PreparedTree[]): { events: Set<string>; segments: Set<string> } {
  const events = new Set<string>();
  const segments = new Set<string>();
  const visit = (tree: PreparedTree) => {
    for (const group of tree.groups) {
      for (const f of group.filters) {
        if (f.field.kind === 'event') events.add(f.field.name);
        if (f.field.kind === 'segment') segments.add(f.field.id);
      }
      if (group.conditions) visit(group.conditions);
    }
  };
  trees.forEach(visit);
  return { events, segments };
}

/** Whether the tree's answer moves with the clock (time windows), so a periodic sweep must re-check it. */
export function dependsOnClock(tree: PreparedTree): boolean {
  return tree.groups.some(
    (g) =>
      g.filters.some((f) => f.value.windowMs !== undefined) || (g.conditions ? dependsOnClock(g.conditions) : false),
  );
}
