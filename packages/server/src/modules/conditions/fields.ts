import { isUuid } from '../../db/scoped.js';

/** What a filter's `field` names, parsed once. */
export type FieldRef =
  | { kind: 'email' }
  | { kind: 'subscribed' }
  | { kind: 'timestamp'; column: 'created_at' | 'updated_at'; key: 'createdAt' | 'updatedAt' }
  /** Contact data; in workflow conditions also the execution's context (`event.*`, `workflow.*`). */
  | { kind: 'data'; path: string[]; source?: 'context' }
  | { kind: 'event'; name: string }
  | { kind: 'segment'; id: string };

export type FieldKind = FieldRef['kind'];

/** `email.<activity>` reads the email events Pigeon records; past-tense forms are accepted. */
const EMAIL_ACTIVITIES: Record<string, string> = {
  sent: 'email.sent',
  delivery: 'email.delivery',
  delivered: 'email.delivery',
  open: 'email.open',
  opened: 'email.open',
  click: 'email.click',
  clicked: 'email.click',
  bounce: 'email.bounce',
  bounced: 'email.bounce',
  complaint: 'email.complaint',
  complained: 'email.complaint',
};

const DATA_KEY = /^[^.\s]{1,100}$/;

/**
 * Where a condition is evaluated. Workflow CONDITION steps (in memory only) may also read the
 * execution's context: `event.<path>` with a comparison operator is the trigger's (or awaited)
 * event data, `workflow.<path>` the context given at a manual start, and `contact.<field>` is an
 * alias of the contact's own fields.
 */
export interface FieldOptions {
  workflow?: { operator: string };
}

const HISTORY_OPERATORS = new Set([
  'triggered',
  'triggeredWithin',
  'triggeredOlderThan',
  'notTriggered',
  'notTriggeredWithin',
]);

/** Parses a field name, or says in words why it names nothing. */
export function parseField(field: string, opts: FieldOptions = {}): FieldRef | { error: string } {
  if (opts.workflow) {
    const context = workflowField(field, opts.workflow.operator);
    if (context) return context;
  }
  switch (field) {
    case 'email':
      return { kind: 'email' };
    case 'subscribed':
      return { kind: 'subscribed' };
    case 'createdAt':
      return { kind: 'timestamp', column: 'created_at', key: 'createdAt' };
    case 'updatedAt':
      return { kind: 'timestamp', column: 'updated_at', key: 'updatedAt' };
  }
  const dot = field.indexOf('.');
  const prefix = dot > 0 ? field.slice(0, dot) : field;
  const rest = dot > 0 ? field.slice(dot + 1) : '';
  switch (prefix) {
    case 'data': {
      const path = rest.split('.');
      if (!rest || !path.every((key) => DATA_KEY.test(key))) return { error: `"${field}" is not a data path` };
      if (path.some((key) => /^\d+$/.test(key))) {
        return { error: `"${field}": array positions are not supported; use contains on the array` };
      }
      return { kind: 'data', path };
    }
    case 'event':
      return rest ? { kind: 'event', name: rest } : { error: '"event." needs an event name' };
    case 'email': {
      const name = EMAIL_ACTIVITIES[rest];
      if (name) return { kind: 'event', name };
      return { error: `"${field}": email activities are ${Object.keys(EMAIL_ACTIVITIES).join(', ')}` };
    }
    case 'segment':
      return isUuid(rest)
        ? { kind: 'segment', id: rest.toLowerCase() }
        : { error: `"${field}": expected segment.<id>` };
  }
  return {
    error: `Unknown field "${field}": use email, subscribed, createdAt, updatedAt, data.<key>, event.<name>, email.<activity> or segment.<id>`,
  };
}

function workflowField(field: string, operator: string): FieldRef | { error: string } | undefined {
  if (field.startsWith('contact.')) return parseField(field.slice('contact.'.length));
  const isEvent = field.startsWith('event.') && !HISTORY_OPERATORS.has(operator);
  if (!isEvent && !field.startsWith('workflow.')) return undefined;
  const parsed = parseField(`data.${field.slice(field.indexOf('.') + 1)}`);
  if ('error' in parsed) return { error: `"${field}" is not a context path` };
  return parsed.kind === 'data'
    ? { kind: 'data', source: 'context', path: [isEvent ? 'event' : 'workflow', ...parsed.path] }
    : parsed;
}

/** Reads a nested data value through objects only (never into arrays), as the SQL `#>` path does here. */
export function dataAt(data: unknown, path: readonly string[]): unknown {
  let value = data;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, key)) {
      return undefined;
    }
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
