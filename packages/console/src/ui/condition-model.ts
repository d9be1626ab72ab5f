import {
  CONDITION_OPERATORS,
  type ConditionFilter,
  type ConditionGroup,
  type ConditionOperator,
  type ConditionTree,
} from '@pigeon/sdk';

/** The condition engine's field kinds and the value rule of each operator (from the contract). */
export type FieldKind = keyof typeof CONDITION_OPERATORS;
export type ValueRule = NonNullable<(typeof CONDITION_OPERATORS)[FieldKind][ConditionOperator]>;

/** What a person picks first: the kind of fact, which then asks for its name (a data key, an event…). */
export const SOURCES = [
  ['contact', 'Contact'],
  ['data', 'Custom data'],
  ['event', 'Event history'],
  ['activity', 'Email activity'],
  ['segment', 'Segment'],
  ['trigger', 'Trigger event data'],
  ['workflow', 'Workflow data'],
] as const;
export type Source = (typeof SOURCES)[number][0];

/**
 * Where a tree is evaluated: over contacts (segments, audiences), or in a workflow's CONDITION step,
 * where `event.<key>` compared with a value reads the trigger event's data and `workflow.<key>` the
 * workflow's (the engine's context fields).
 */
export type Scope = 'contacts' | 'workflow';
const CONTEXT_SOURCES: Source[] = ['trigger', 'workflow'];
export const sourcesOf = (scope: Scope) =>
  SOURCES.filter(([source]) => scope === 'workflow' || !CONTEXT_SOURCES.includes(source));

const HISTORY_OPERATORS: ConditionOperator[] = [
  'triggered',
  'triggeredWithin',
  'triggeredOlderThan',
  'notTriggered',
  'notTriggeredWithin',
];

export const CONTACT_FIELDS: Array<[string, string]> = [
  ['email', 'Email address'],
  ['subscribed', 'Subscribed'],
  ['createdAt', 'Created'],
  ['updatedAt', 'Updated'],
];
export const ACTIVITIES: Array<[string, string]> = [
  ['sent', 'Sent'],
  ['delivery', 'Delivered'],
  ['open', 'Opened'],
  ['click', 'Clicked'],
  ['bounce', 'Bounced'],
  ['complaint', 'Complained'],
];

export const OPERATOR_LABELS: Record<ConditionOperator, string> = {
  equals: 'is',
  notEquals: 'is not',
  contains: 'contains',
  notContains: 'does not contain',
  greaterThan: 'is greater than / after',
  lessThan: 'is less than / before',
  greaterThanOrEqual: 'is at least / on or after',
  lessThanOrEqual: 'is at most / on or before',
  exists: 'is set',
  notExists: 'is not set',
  within: 'is within the last',
  olderThan: 'is longer ago than',
  triggered: 'happened',
  triggeredWithin: 'happened within the last',
  triggeredOlderThan: 'first happened longer ago than',
  notTriggered: 'never happened',
  notTriggeredWithin: 'did not happen within the last',
  memberOfSegment: 'is a member',
  notMemberOfSegment: 'is not a member',
};

/** Where a filter's field comes from, and the name within it (`data.plan` → data, `plan`). */
export function sourceOf(filter: ConditionFilter, scope: Scope = 'contacts'): { source: Source; name: string } {
  const field = scope === 'workflow' && filter.field.startsWith('contact.') ? filter.field.slice(8) : filter.field;
  const dot = field.indexOf('.');
  const head = dot < 0 ? field : field.slice(0, dot);
  const rest = dot < 0 ? '' : field.slice(dot + 1);
  if (head === 'data') return { source: 'data', name: rest };
  if (head === 'event') {
    const history = scope === 'contacts' || HISTORY_OPERATORS.includes(filter.operator);
    return { source: history ? 'event' : 'trigger', name: rest };
  }
  if (head === 'workflow' && scope === 'workflow') return { source: 'workflow', name: rest };
  if (head === 'segment') return { source: 'segment', name: rest };
  if (head === 'email' && rest) return { source: 'activity', name: rest };
  return { source: 'contact', name: field };
}

export function fieldOf(source: Source, name: string): string {
  if (source === 'contact') return name || 'email';
  if (source === 'activity') return `email.${name || 'open'}`;
  if (source === 'trigger') return `event.${name}`;
  return `${source}.${name}`;
}

/** The engine's kind of field a source names. */
export function kindOf(source: Source, name: string): FieldKind {
  if (source === 'contact') return name === 'email' || name === 'subscribed' ? name : 'timestamp';
  if (source === 'activity') return 'event';
  if (source === 'trigger' || source === 'workflow') return 'data';
  return source;
}

const kindOfFilter = (filter: ConditionFilter, scope: Scope) => {
  const { source, name } = sourceOf(filter, scope);
  return kindOf(source, name);
};

export const operatorsOf = (kind: FieldKind) => Object.keys(CONDITION_OPERATORS[kind]) as ConditionOperator[];

export const ruleOf = (filter: ConditionFilter, scope: Scope = 'contacts'): ValueRule =>
  CONDITION_OPERATORS[kindOfFilter(filter, scope)][filter.operator] ?? 'none';

/** A filter whose operator still fits its (new) field, with a value of the right shape. */
export function refit(filter: ConditionFilter, scope: Scope = 'contacts'): ConditionFilter {
  const operators = operatorsOf(kindOfFilter(filter, scope));
  const operator = operators.includes(filter.operator) ? filter.operator : (operators[0] as ConditionOperator);
  const next: ConditionFilter = { field: filter.field, operator };
  const rule = ruleOf(next, scope);
  if (rule === 'amount')
    return { ...next, value: typeof filter.value === 'number' ? filter.value : 7, unit: filter.unit ?? 'days' };
  if (rule === 'boolean') return { ...next, value: typeof filter.value === 'boolean' ? filter.value : true };
  if (rule === 'none') return next;
  return { ...next, value: filter.value ?? '' };
}

export const newFilter = (): ConditionFilter => refit({ field: 'email', operator: 'contains', value: '' });
export const newGroup = (): ConditionGroup => ({ filters: [newFilter()] });
export const emptyCondition = (): ConditionTree => ({ logic: 'AND', groups: [newGroup()] });

/** Whether every filter has what its operator needs, so the tree is worth sending for a count. */
export function isComplete(tree: ConditionTree, scope: Scope = 'contacts'): boolean {
  return tree.groups.every(
    (group) =>
      (group.filters.length > 0 || group.conditions) &&
      group.filters.every((f) => {
        const { source, name } = sourceOf(f, scope);
        if (source !== 'contact' && !name) return false;
        const rule = ruleOf(f, scope);
        return rule === 'none' || rule === 'boolean' || (f.value !== '' && f.value !== undefined);
      }) &&
      (!group.conditions || isComplete(group.conditions, scope)),
  );
}

/** A typed value from a text box: numbers as numbers where the rule allows one, text otherwise. */
export function parseValue(text: string, rule: ValueRule, as: 'text' | 'number' | 'boolean' = 'text'): unknown {
  if (rule === 'amount') return text === '' ? '' : Number(text);
  if (rule === 'numberOrDate') return text !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
  if (rule === 'scalar' && as === 'number') return text !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
  if (rule === 'scalar' && as === 'boolean') return text === 'true';
  return text;
}
