import { isUuid } from '../../db/scoped.js';

/** What a filter's `field` names, parsed once. */
export type FieldRef =
  | { kind: 'email' }
  | { kind: 'subscribed' }
  | { kind: 'timestamp'; column: 'created_at' | 'updated_at'; key: 'createdAt' | 'updatedAt' }
  | { kind: 'data'; path: string[] }
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

/** Parses a field name, or says in words why it names nothing. */
export function parseField(field: string): FieldRef | { error: string } {
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
