import type { ConditionFilter, ConditionTreeInput } from '@pigeon/contract';
import { CONDITION_OPERATORS, ConditionFieldKind, ConditionTree } from '@pigeon/contract';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertContact } from '../../../test/fixtures/contacts.js';
import { insertEvent } from '../../../test/fixtures/event-log.js';
import { addSegmentMembers, insertSegment } from '../../../test/fixtures/segments.js';
import { poolWithProject } from '../../../test/helpers.js';
import { queryRows, sql } from '../../db/query.js';
import { checkCondition, conditionSql, evaluation, loadFacts } from './engine.js';
import { parseField } from './fields.js';
import { FIELD_KINDS, operatorFor, operatorsOf } from './operators.js';
import { evaluateTree } from './tree.js';

/**
 * One table runs every operator over every field kind through both evaluators (SQL over the
 * real database, and in memory over loaded facts) and requires both to give the expected set.
 */

const NOW = Date.parse('2026-06-15T12:00:00Z');
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

let pool: pg.Pool;
let projectId: string;
const ids: Record<string, string> = {};
let staticSegment: string;
let dynamicSegment: string;

/** Contacts with every kind of value a condition has to cope with. */
const CONTACTS: Record<
  string,
  { email: string; subscribed: boolean; data: Record<string, unknown>; createdAt: number }
> = {
  ann: {
    email: 'ann@acme.example',
    subscribed: true,
    data: { plan: 'pro', age: 34, tags: ['vip', 'beta'], signup: '2026-06-10', address: { city: 'Oslo' }, score: 7.5 },
    createdAt: NOW - 2 * DAY,
  },
  bob: {
    email: 'bob@beta.example',
    subscribed: false,
    data: {
      plan: 'free',
      age: '34',
      tags: 'VIP member',
      signup: '2025-01-01T08:30:00+02:00',
      address: { city: 'Bergen' },
    },
    createdAt: NOW - 40 * DAY,
  },
  cat: {
    email: 'cat@acme.example',
    subscribed: true,
    data: { plan: 'PRO', age: 19, signup: 'not a date', nothing: null, flag: true, tags: [3, 'x'] },
    createdAt: NOW - 400 * DAY,
  },
  dan: {
    email: 'dan@other.example',
    subscribed: true,
    data: { age: 61.5, signup: '2026-02-31', flag: false },
    createdAt: NOW - 10 * DAY,
  },
};

beforeAll(async () => {
  projectId = uuidv7();
  pool = await poolWithProject(projectId);
  for (const [label, c] of Object.entries(CONTACTS)) {
    ids[label] = uuidv7();
    await insertContact(pool, { id: ids[label], projectId, ...c, createdAt: new Date(c.createdAt) });
  }
  const event = (label: string, name: string, at: number) =>
    insertEvent(pool, { id: uuidv7(), projectId, contactId: ids[label], name, createdAt: new Date(at) });
  await event('ann', 'purchase', NOW - 1 * DAY);
  await event('ann', 'purchase', NOW - 20 * DAY);
  await event('bob', 'purchase', NOW - 60 * DAY);
  await event('cat', 'email.open', NOW - 3600_000);
  await event('dan', 'email.click', NOW - 5 * DAY);
  staticSegment = uuidv7();
  dynamicSegment = uuidv7();
  await insertSegment(pool, { id: staticSegment, projectId, name: 'static', type: 'STATIC' });
  await insertSegment(pool, {
    id: dynamicSegment,
    projectId,
    name: 'dynamic',
    type: 'DYNAMIC',
    condition: tree({ field: 'data.age', operator: 'greaterThan', value: 30 }),
  });
  await addSegmentMembers(pool, projectId, staticSegment, [ids.bob, ids.cat] as string[]);
});
afterAll(() => pool?.end());

function tree(...filters: Array<Partial<ConditionFilter>>): ConditionTreeInput {
  return { logic: 'AND', groups: [{ filters: filters as ConditionFilter[] }] };
}

/** Both evaluators' answers, as sorted labels. */
async function bothWays(input: ConditionTreeInput) {
  const parsed = ConditionTree.parse(input);
  const { tree: prepared, scope } = await checkCondition(pool, projectId, parsed);
  const rows = await queryRows<{ id: string }>(
    pool,
    sql`SELECT c.id FROM contacts c WHERE c.project_id = ${projectId} AND ${conditionSql(prepared, scope, NOW)}`,
  );
  const labelOf = (id: string) => Object.keys(ids).find((k) => ids[k] === id) as string;
  const inSql = rows.map((r) => labelOf(r.id)).sort();
  const facts = await loadFacts(pool, projectId, Object.values(ids), [prepared], scope);
  const ev = evaluation(scope, NOW);
  const inMemory = [...facts.values()]
    .filter((f) => evaluateTree(prepared, f, ev))
    .map((f) => labelOf(f.id))
    .sort();
  return { inSql, inMemory };
}

type Case = [string, Partial<ConditionFilter>, string[]];
const seg = (id: () => string) => id;

const CASES: Case[] = [
  // email (text standard field)
  ['email equals (any case)', { field: 'email', operator: 'equals', value: 'ANN@acme.example' }, ['ann']],
  ['email notEquals', { field: 'email', operator: 'notEquals', value: 'ann@acme.example' }, ['bob', 'cat', 'dan']],
  ['email contains', { field: 'email', operator: 'contains', value: '@ACME' }, ['ann', 'cat']],
  ['email contains a LIKE wildcard literally', { field: 'email', operator: 'contains', value: '%' }, []],
  ['email notContains', { field: 'email', operator: 'notContains', value: 'acme' }, ['bob', 'dan']],
  ['email exists', { field: 'email', operator: 'exists' }, ['ann', 'bob', 'cat', 'dan']],
  ['email notExists', { field: 'email', operator: 'notExists' }, []],
  // subscribed (boolean)
  ['subscribed equals true', { field: 'subscribed', operator: 'equals', value: true }, ['ann', 'cat', 'dan']],
  ['subscribed notEquals true', { field: 'subscribed', operator: 'notEquals', value: true }, ['bob']],
  ['subscribed exists', { field: 'subscribed', operator: 'exists' }, ['ann', 'bob', 'cat', 'dan']],
  ['subscribed notExists', { field: 'subscribed', operator: 'notExists' }, []],
  // createdAt (timestamp)
  ['createdAt greaterThan', { field: 'createdAt', operator: 'greaterThan', value: iso(NOW - 10 * DAY) }, ['ann']],
  [
    'createdAt greaterThanOrEqual',
    { field: 'createdAt', operator: 'greaterThanOrEqual', value: iso(NOW - 10 * DAY) },
    ['ann', 'dan'],
  ],
  ['createdAt lessThan', { field: 'createdAt', operator: 'lessThan', value: iso(NOW - 10 * DAY) }, ['bob', 'cat']],
  [
    'createdAt lessThanOrEqual',
    { field: 'createdAt', operator: 'lessThanOrEqual', value: iso(NOW - 40 * DAY) },
    ['bob', 'cat'],
  ],
  ['createdAt within 7 days', { field: 'createdAt', operator: 'within', value: 7, unit: 'days' }, ['ann']],
  ['createdAt within 240 hours', { field: 'createdAt', operator: 'within', value: 240, unit: 'hours' }, ['ann', 'dan']],
  [
    'createdAt olderThan 30 days',
    { field: 'createdAt', operator: 'olderThan', value: 30, unit: 'days' },
    ['bob', 'cat'],
  ],
  ['updatedAt exists', { field: 'updatedAt', operator: 'exists' }, ['ann', 'bob', 'cat', 'dan']],
  ['updatedAt notExists', { field: 'updatedAt', operator: 'notExists' }, []],
  // data: strings (case-sensitive equality, case-insensitive contains), nested paths
  ['data equals text', { field: 'data.plan', operator: 'equals', value: 'pro' }, ['ann']],
  [
    'data notEquals text (missing counts)',
    { field: 'data.plan', operator: 'notEquals', value: 'pro' },
    ['bob', 'cat', 'dan'],
  ],
  ['data equals never matches inside an array', { field: 'data.tags', operator: 'equals', value: 'vip' }, []],
  ['data equals nested', { field: 'data.address.city', operator: 'equals', value: 'Oslo' }, ['ann']],
  ['data contains text, any case', { field: 'data.plan', operator: 'contains', value: 'PR' }, ['ann', 'cat']],
  ['data contains: text or array element', { field: 'data.tags', operator: 'contains', value: 'vip' }, ['ann', 'bob']],
  ['data contains a number element', { field: 'data.tags', operator: 'contains', value: 3 }, ['cat']],
  ['data notContains', { field: 'data.tags', operator: 'notContains', value: 'vip' }, ['cat', 'dan']],
  // data: numbers compare as numbers; "34" is text and never matches a number
  ['data equals number', { field: 'data.age', operator: 'equals', value: 34 }, ['ann']],
  ['data equals text "34"', { field: 'data.age', operator: 'equals', value: '34' }, ['bob']],
  ['data equals boolean', { field: 'data.flag', operator: 'equals', value: false }, ['dan']],
  ['data greaterThan number', { field: 'data.age', operator: 'greaterThan', value: 30 }, ['ann', 'dan']],
  ['data greaterThanOrEqual number', { field: 'data.age', operator: 'greaterThanOrEqual', value: 34 }, ['ann', 'dan']],
  ['data lessThan number', { field: 'data.age', operator: 'lessThan', value: 34 }, ['cat']],
  ['data lessThanOrEqual decimal', { field: 'data.score', operator: 'lessThanOrEqual', value: 7.5 }, ['ann']],
  // data: ISO dates compare as instants; invalid dates (Feb 31, free text) never match
  [
    'data greaterThan date (offsets respected)',
    { field: 'data.signup', operator: 'greaterThan', value: '2025-01-01T06:00:00Z' },
    ['ann', 'bob'],
  ],
  ['data lessThan date', { field: 'data.signup', operator: 'lessThan', value: '2025-01-01T07:00:00Z' }, ['bob']],
  [
    'data greaterThanOrEqual date',
    { field: 'data.signup', operator: 'greaterThanOrEqual', value: '2025-01-01T06:30Z' },
    ['ann', 'bob'],
  ],
  [
    'data lessThanOrEqual date',
    { field: 'data.signup', operator: 'lessThanOrEqual', value: '2026-06-10' },
    ['ann', 'bob'],
  ],
  ['data within 30 days', { field: 'data.signup', operator: 'within', value: 30, unit: 'days' }, ['ann']],
  ['data olderThan 30 days', { field: 'data.signup', operator: 'olderThan', value: 30, unit: 'days' }, ['bob']],
  ['data exists (null does not exist)', { field: 'data.nothing', operator: 'exists' }, []],
  ['data exists nested', { field: 'data.address.city', operator: 'exists' }, ['ann', 'bob']],
  ['data notExists', { field: 'data.plan', operator: 'notExists' }, ['dan']],
  // events
  ['event triggered', { field: 'event.purchase', operator: 'triggered' }, ['ann', 'bob']],
  ['event notTriggered', { field: 'event.purchase', operator: 'notTriggered' }, ['cat', 'dan']],
  ['event triggeredWithin', { field: 'event.purchase', operator: 'triggeredWithin', value: 7, unit: 'days' }, ['ann']],
  [
    'event triggeredOlderThan',
    { field: 'event.purchase', operator: 'triggeredOlderThan', value: 10, unit: 'days' },
    ['ann', 'bob'],
  ],
  [
    'event notTriggeredWithin',
    { field: 'event.purchase', operator: 'notTriggeredWithin', value: 30, unit: 'days' },
    ['bob', 'cat', 'dan'],
  ],
  [
    'event triggeredWithin seconds',
    { field: 'email.open', operator: 'triggeredWithin', value: 3601, unit: 'seconds' },
    ['cat'],
  ],
  // email activity, past tense accepted
  ['email.opened triggered', { field: 'email.opened', operator: 'triggered' }, ['cat']],
  [
    'email.click triggeredWithin minutes',
    { field: 'email.click', operator: 'triggeredWithin', value: 7200, unit: 'minutes' },
    ['dan'],
  ],
  ['email.sent notTriggered', { field: 'email.sent', operator: 'notTriggered' }, ['ann', 'bob', 'cat', 'dan']],
];

/** Segment fields name a segment created in `beforeAll`, so their cases run in a test of their own. */
const SEGMENT_CASES = [
  ['memberOfSegment', () => staticSegment, ['bob', 'cat']],
  ['notMemberOfSegment', () => staticSegment, ['ann', 'dan']],
  ['memberOfSegment', () => dynamicSegment, ['ann', 'dan']],
  ['notMemberOfSegment', () => dynamicSegment, ['bob', 'cat']],
] as const;

describe('condition engine: every operator × field kind, SQL and in memory', () => {
  it('the tables cover every operator of every field kind (a new operator needs a case here)', () => {
    const covered = new Set(SEGMENT_CASES.map(([operator]) => `segment ${operator}`));
    for (const [, filter] of CASES) {
      const field = parseField(filter.field ?? '');
      if ('kind' in field) covered.add(`${field.kind} ${filter.operator}`);
    }
    const missing = FIELD_KINDS.flatMap((kind) =>
      operatorsOf(kind)
        .map((operator) => `${kind} ${operator}`)
        .filter((pair) => !covered.has(pair)),
    );
    expect(missing).toEqual([]);
    expect(covered.size).toBeGreaterThanOrEqual(FIELD_KINDS.length);
  });

  it("the contract's operator table (what condition builders offer) is the engine's, value rules included", () => {
    const field = {
      email: 'email',
      subscribed: 'subscribed',
      timestamp: 'createdAt',
      data: 'data.x',
      event: 'event.x',
      segment: `segment.${uuidv7()}`,
    };
    expect([...FIELD_KINDS].sort()).toEqual([...ConditionFieldKind.options].sort());
    for (const kind of FIELD_KINDS) {
      const parsed = parseField(field[kind]);
      if (!('kind' in parsed) || parsed.kind !== kind) throw new Error(`${field[kind]} is not a ${kind} field`);
      const engine = Object.fromEntries(operatorsOf(kind).map((op) => [op, operatorFor(parsed, op)?.takes]));
      expect(engine, kind).toEqual(CONDITION_OPERATORS[kind]);
    }
  });

  it.each(CASES)('%s', async (_name, filter, expected) => {
    const { inSql, inMemory } = await bothWays(tree(filter));
    expect(inSql).toEqual(expected);
    expect(inMemory).toEqual(expected);
  });

  it('segment membership: STATIC by member rows, DYNAMIC by its own condition', async () => {
    for (const [operator, field, expected] of SEGMENT_CASES) {
      const { inSql, inMemory } = await bothWays(tree({ field: `segment.${seg(field)()}`, operator }));
      expect(inSql).toEqual(expected);
      expect(inMemory).toEqual(expected);
    }
  });

  it('AND / OR and nested groups', async () => {
    const input: ConditionTreeInput = {
      logic: 'OR',
      groups: [
        { filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }] },
        {
          filters: [{ field: 'subscribed', operator: 'equals', value: true }],
          conditions: {
            logic: 'OR',
            groups: [
              { filters: [{ field: 'data.age', operator: 'greaterThan', value: 60 }] },
              { filters: [{ field: 'email.open', operator: 'triggered' }] },
            ],
          },
        },
      ],
    };
    const { inSql, inMemory } = await bothWays(input);
    expect(inSql).toEqual(['ann', 'cat', 'dan']);
    expect(inMemory).toEqual(['ann', 'cat', 'dan']);
  });
});

describe('condition validation', () => {
  const problemsOf = async (input: unknown) => {
    const parsed = ConditionTree.safeParse(input);
    if (!parsed.success) return parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    try {
      await checkCondition(pool, projectId, parsed.data);
      return [];
    } catch (err) {
      return ((err as { extra: { errors: Array<{ field: string; message: string }> } }).extra.errors ?? []).map(
        (e) => `${e.field}: ${e.message}`,
      );
    }
  };

  it.each([
    [{ field: 'subscribed', operator: 'greaterThan', value: 1 }, 'condition.groups.1.filters.0.operator'],
    [{ field: 'nope', operator: 'equals', value: 1 }, 'condition.groups.1.filters.0.field'],
    [{ field: 'data.age', operator: 'greaterThan', value: 'lots' }, 'condition.groups.1.filters.0.value'],
    [{ field: 'data.plan', operator: 'equals', value: 'pro', unit: 'days' }, 'condition.groups.1.filters.0.unit'],
    [{ field: 'createdAt', operator: 'within', value: 3 }, 'condition.groups.1.filters.0.unit'],
    [{ field: 'createdAt', operator: 'within', value: -3, unit: 'days' }, 'condition.groups.1.filters.0.value'],
    [{ field: 'data.plan', operator: 'equals', value: null }, 'condition.groups.1.filters.0.value'],
    [{ field: 'data.items.0', operator: 'exists' }, 'condition.groups.1.filters.0.field'],
    [{ field: 'email.opens', operator: 'triggered' }, 'condition.groups.1.filters.0.field'],
    [{ field: 'event.signup', operator: 'triggered', value: 'x' }, 'condition.groups.1.filters.0.value'],
    [{ field: `segment.${uuidv7()}`, operator: 'memberOfSegment' }, 'condition.groups.1.filters.0.field'],
  ])('%o is refused at %s', async (filter, path) => {
    const problems = await problemsOf({
      logic: 'AND',
      groups: [{ filters: [{ field: 'email', operator: 'exists' }] }, { filters: [filter] }],
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${path.replace(/\./g, '\\.')}: `));
  });

  it('refuses unknown operators, trees too deep or too large, and empty groups without running them', async () => {
    expect((await problemsOf(tree({ field: 'email', operator: 'like' as never })))[0]).toMatch(
      /^groups\.0\.filters\.0\.operator: Invalid enum value/,
    );
    let deep: unknown = tree({ field: 'email', operator: 'exists' });
    for (let i = 0; i < 10_000; i++) deep = { logic: 'AND', groups: [{ filters: [], conditions: deep }] };
    expect(await problemsOf(deep)).toEqual([': Conditions nest at most 5 levels deep']);
    const wide = {
      logic: 'AND',
      groups: [{ filters: Array.from({ length: 10_000 }, () => ({ field: 'email', operator: 'exists' })) }],
    };
    expect(await problemsOf(wide)).toEqual([': A condition holds at most 100 filters']);
    expect(await problemsOf({ logic: 'AND', groups: [{ filters: [] }] })).toEqual([
      'groups.0.filters: A group needs filters or nested conditions',
    ]);
  });
});
