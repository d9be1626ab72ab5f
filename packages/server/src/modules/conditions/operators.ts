import type { ConditionOperator, ConditionValueRule } from '@pigeon/contract';
import { raw, type Sql, sql } from '../../db/query.js';
import { escapeLike } from '../../kit/cursor.js';
import { dataAt, type FieldKind, type FieldRef } from './fields.js';
import { parseIsoDate } from './values.js';

/** What one contact looks like to the in-memory evaluator: only the facts its conditions read. */
export interface ContactFacts {
  id: string;
  email: string;
  subscribed: boolean;
  data: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
  /** First and last time of each event name the conditions ask about. */
  events: Map<string, { first: number; last: number }>;
  /** STATIC segments (among those asked about) the contact belongs to. */
  staticSegments: Set<string>;
  /** A workflow execution's context (`event`, `workflow`), read by context fields. */
  context?: Record<string, unknown>;
}

/** A filter's value after validation: the raw JSON value, plus its instant or window when it has one. */
export interface FilterValue {
  raw: unknown;
  /** The instant of an ISO date value. */
  at?: number;
  /** The window of a time operator (value × unit), in milliseconds. */
  windowMs?: number;
}

/** How a filter's value must look for an operator; `amount` also needs a unit. */
export type ValueRule = ConditionValueRule;

export interface Evaluation {
  /** "Now" for time operators: one instant shared by both evaluators, so tests can fix it. */
  now: number;
  memberOfSql(segmentId: string): Sql;
  memberOf(segmentId: string, facts: ContactFacts): boolean;
}

interface Operator<F extends FieldRef> {
  takes: ValueRule;
  /** A boolean SQL expression over the contact row `c`; never NULL. */
  sql(field: F, value: FilterValue, ev: Evaluation): Sql;
  test(field: F, value: FilterValue, facts: ContactFacts, ev: Evaluation): boolean;
}

type FieldOf<K extends FieldKind> = Extract<FieldRef, { kind: K }>;
type Table<K extends FieldKind> = Partial<Record<ConditionOperator, Operator<FieldOf<K>>>>;

const not = <F extends FieldRef>(op: Operator<F>): Operator<F> => ({
  takes: op.takes,
  sql: (f, v, ev) => sql`NOT ${op.sql(f, v, ev)}`,
  test: (f, v, facts, ev) => !op.test(f, v, facts, ev),
});

const always = (result: boolean): Operator<FieldRef> => ({
  takes: 'none',
  sql: () => raw(result ? 'true' : 'false'),
  test: () => result,
});

type Comparison = '>' | '<' | '>=' | '<=';
const COMPARISONS: Array<[ConditionOperator, Comparison]> = [
  ['greaterThan', '>'],
  ['lessThan', '<'],
  ['greaterThanOrEqual', '>='],
  ['lessThanOrEqual', '<='],
];
const compare = (a: number, how: Comparison, b: number) =>
  how === '>' ? a > b : how === '<' ? a < b : how === '>=' ? a >= b : a <= b;

/** Builds the four comparison operators from one definition each way. */
function comparisons<K extends FieldKind>(
  takes: ValueRule,
  toSql: (f: FieldOf<K>, how: Comparison, v: FilterValue) => Sql,
  toTest: (f: FieldOf<K>, how: Comparison, v: FilterValue, facts: ContactFacts) => boolean,
): Table<K> {
  return Object.fromEntries(
    COMPARISONS.map(([name, how]) => [
      name,
      { takes, sql: (f, v) => toSql(f, how, v), test: (f, v, facts) => toTest(f, how, v, facts) } as Operator<
        FieldOf<K>
      >,
    ]),
  );
}

/** `within N units`: between now − N and now. `olderThan N units`: before now − N. */
function timeWindow<K extends FieldKind>(
  column: (f: FieldOf<K>) => Sql,
  instant: (f: FieldOf<K>, facts: ContactFacts) => number | undefined,
): Table<K> {
  const since = (v: FilterValue, ev: Evaluation) => ev.now - (v.windowMs ?? 0);
  return {
    within: {
      takes: 'amount',
      sql: (f, v, ev) =>
        sql`COALESCE(${column(f)} BETWEEN ${new Date(since(v, ev))}::timestamptz AND ${new Date(ev.now)}::timestamptz, false)`,
      test: (f, v, facts, ev) => {
        const at = instant(f, facts);
        return at !== undefined && at >= since(v, ev) && at <= ev.now;
      },
    },
    olderThan: {
      takes: 'amount',
      sql: (f, v, ev) => sql`COALESCE(${column(f)} < ${new Date(since(v, ev))}::timestamptz, false)`,
      test: (f, v, facts, ev) => {
        const at = instant(f, facts);
        return at !== undefined && at < since(v, ev);
      },
    },
  };
}

// ── Standard fields ────────────────────────────────────────────────────────────────────────────

const emailEquals: Operator<FieldOf<'email'>> = {
  takes: 'string',
  sql: (_f, v) => sql`c.email = ${String(v.raw).toLowerCase()}`,
  test: (_f, v, facts) => facts.email === String(v.raw).toLowerCase(),
};
const emailContains: Operator<FieldOf<'email'>> = {
  takes: 'string',
  // LIKE (not strpos) so the trigram index on email can serve it; emails are stored lower-cased.
  sql: (_f, v) => sql`c.email LIKE ${`%${escapeLike(String(v.raw).toLowerCase())}%`}`,
  test: (_f, v, facts) => facts.email.includes(String(v.raw).toLowerCase()),
};

const EMAIL: Table<'email'> = {
  equals: emailEquals,
  notEquals: not(emailEquals),
  contains: emailContains,
  notContains: not(emailContains),
  exists: always(true),
  notExists: always(false),
};

const subscribedEquals: Operator<FieldOf<'subscribed'>> = {
  takes: 'boolean',
  sql: (_f, v) => sql`c.subscribed = ${v.raw === true}`,
  test: (_f, v, facts) => facts.subscribed === (v.raw === true),
};

const SUBSCRIBED: Table<'subscribed'> = {
  equals: subscribedEquals,
  notEquals: not(subscribedEquals),
  exists: always(true),
  notExists: always(false),
};

const timestampColumn = (f: FieldOf<'timestamp'>) => raw(`c.${f.column}`);
const timestampOf = (f: FieldOf<'timestamp'>, facts: ContactFacts) => facts[f.key];

const TIMESTAMP: Table<'timestamp'> = {
  ...comparisons<'timestamp'>(
    'date',
    (f, how, v) => sql`${timestampColumn(f)} ${raw(how)} ${new Date(v.at ?? 0)}::timestamptz`,
    (f, how, v, facts) => compare(timestampOf(f, facts), how, v.at ?? 0),
  ),
  ...timeWindow<'timestamp'>(timestampColumn, timestampOf),
  exists: always(true),
  notExists: always(false),
};

// ── Custom data (`data.<path>`): type-aware, a value of another type never matches ──────────────

const at = (f: FieldOf<'data'>) => sql`(c.data #> ${f.path}::text[])`;
const storedValue = (f: FieldOf<'data'>, facts: ContactFacts) =>
  dataAt(f.source === 'context' ? facts.context : facts.data, f.path);
const nested = (path: readonly string[], value: unknown): unknown =>
  path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
const isText = (v: unknown): v is string => typeof v === 'string';

const dataEquals: Operator<FieldOf<'data'>> = {
  takes: 'scalar',
  // Containment, so the GIN index on data serves equality at any depth.
  sql: (f, v) => sql`c.data @> ${JSON.stringify(nested(f.path, v.raw))}::jsonb`,
  test: (f, v, facts) => storedValue(f, facts) === v.raw,
};

/** Text: case-insensitive substring. Array: has the value as an element (exact). */
const dataContains: Operator<FieldOf<'data'>> = {
  takes: 'scalar',
  sql: (f, v) => {
    const element = sql`${at(f)} @> ${JSON.stringify(v.raw)}::jsonb`;
    if (!isText(v.raw)) return sql`COALESCE(jsonb_typeof(${at(f)}) = 'array' AND ${element}, false)`;
    return sql`COALESCE(CASE jsonb_typeof(${at(f)})
      WHEN 'string' THEN strpos(lower(${at(f)} #>> '{}'), ${v.raw.toLowerCase()}) > 0
      WHEN 'array' THEN ${element} ELSE false END, false)`;
  },
  test: (f, v, facts) => {
    const value = storedValue(f, facts);
    if (Array.isArray(value)) return value.some((item) => item === v.raw);
    return isText(value) && isText(v.raw) && value.toLowerCase().includes(v.raw.toLowerCase());
  },
};

const dataExists: Operator<FieldOf<'data'>> = {
  takes: 'none',
  sql: (f) => sql`COALESCE(jsonb_typeof(${at(f)}) <> 'null', false)`,
  test: (f, _v, facts) => {
    const value = storedValue(f, facts);
    return value !== undefined && value !== null;
  },
};

const dataInstant = (f: FieldOf<'data'>, facts: ContactFacts) => parseIsoDate(storedValue(f, facts));
const dataTimestamp = (f: FieldOf<'data'>) => sql`pigeon_iso_ts(${at(f)})`;

const DATA: Table<'data'> = {
  equals: dataEquals,
  notEquals: not(dataEquals),
  contains: dataContains,
  notContains: not(dataContains),
  ...comparisons<'data'>(
    'numberOrDate',
    (f, how, v) =>
      v.at === undefined
        ? sql`COALESCE(CASE WHEN jsonb_typeof(${at(f)}) = 'number' THEN ${at(f)}::numeric ${raw(how)} ${v.raw}::numeric END, false)`
        : sql`COALESCE(${dataTimestamp(f)} ${raw(how)} ${new Date(v.at)}::timestamptz, false)`,
    (f, how, v, facts) => {
      if (v.at !== undefined) {
        const instant = dataInstant(f, facts);
        return instant !== undefined && compare(instant, how, v.at);
      }
      const value = storedValue(f, facts);
      return typeof value === 'number' && compare(value, how, v.raw as number);
    },
  ),
  ...timeWindow<'data'>(dataTimestamp, dataInstant),
  exists: dataExists,
  notExists: not(dataExists),
};

// ── Events (`event.<name>`, `email.<activity>`) ────────────────────────────────────────────────

const happened = (f: FieldOf<'event'>, extra: Sql) =>
  sql`EXISTS (SELECT 1 FROM events e WHERE e.project_id = c.project_id AND e.contact_id = c.id AND e.name = ${f.name}${extra})`;
const since = (v: FilterValue, ev: Evaluation) => new Date(ev.now - (v.windowMs ?? 0));

const triggered: Operator<FieldOf<'event'>> = {
  takes: 'none',
  sql: (f) => happened(f, raw('')),
  test: (f, _v, facts) => facts.events.has(f.name),
};
const triggeredWithin: Operator<FieldOf<'event'>> = {
  takes: 'amount',
  sql: (f, v, ev) => happened(f, sql` AND e.created_at >= ${since(v, ev)}::timestamptz`),
  test: (f, v, facts, ev) => (facts.events.get(f.name)?.last ?? -Infinity) >= since(v, ev).getTime(),
};

const EVENT: Table<'event'> = {
  triggered,
  notTriggered: not(triggered),
  triggeredWithin,
  notTriggeredWithin: not(triggeredWithin),
  triggeredOlderThan: {
    takes: 'amount',
    sql: (f, v, ev) => happened(f, sql` AND e.created_at < ${since(v, ev)}::timestamptz`),
    test: (f, v, facts, ev) => (facts.events.get(f.name)?.first ?? Infinity) < since(v, ev).getTime(),
  },
};

// ── Segment membership (`segment.<id>`) ────────────────────────────────────────────────────────

const memberOf: Operator<FieldOf<'segment'>> = {
  takes: 'none',
  sql: (f, _v, ev) => ev.memberOfSql(f.id),
  test: (f, _v, facts, ev) => ev.memberOf(f.id, facts),
};

const SEGMENT: Table<'segment'> = { memberOfSegment: memberOf, notMemberOfSegment: not(memberOf) };

const OPERATORS: { [K in FieldKind]: Table<K> } = {
  email: EMAIL,
  subscribed: SUBSCRIBED,
  timestamp: TIMESTAMP,
  data: DATA,
  event: EVENT,
  segment: SEGMENT,
};

/** The operator for a field, or undefined when the pair makes no sense. */
export function operatorFor(field: FieldRef, operator: ConditionOperator): Operator<FieldRef> | undefined {
  return (OPERATORS[field.kind] as Table<FieldKind>)[operator] as Operator<FieldRef> | undefined;
}

export const operatorsOf = (kind: FieldKind) => Object.keys(OPERATORS[kind]) as ConditionOperator[];

/** Every field kind (the keys of the operator table, which the type requires to be complete). */
export const FIELD_KINDS = Object.keys(OPERATORS) as FieldKind[];
