import { z } from 'zod';

/** Every operator of a condition filter (REFERENCE.md); which fields each applies to is in the docs. */
export const ConditionOperator = z.enum([
  'equals',
  'notEquals',
  'contains',
  'notContains',
  'greaterThan',
  'lessThan',
  'greaterThanOrEqual',
  'lessThanOrEqual',
  'exists',
  'notExists',
  'within',
  'olderThan',
  'triggered',
  'triggeredWithin',
  'triggeredOlderThan',
  'notTriggered',
  'notTriggeredWithin',
  'memberOfSegment',
  'notMemberOfSegment',
]);
export type ConditionOperator = z.infer<typeof ConditionOperator>;

export const ConditionUnit = z.enum(['seconds', 'minutes', 'hours', 'days']);
export type ConditionUnit = z.infer<typeof ConditionUnit>;

export const ConditionLogic = z.enum(['AND', 'OR']);
export type ConditionLogic = z.infer<typeof ConditionLogic>;

/**
 * How a filter's value must look for an operator: nothing, text, true/false, any scalar, a number or
 * ISO date, an ISO date, or an amount with a `unit`.
 */
export const ConditionValueRule = z.enum(['none', 'string', 'boolean', 'scalar', 'numberOrDate', 'date', 'amount']);
export type ConditionValueRule = z.infer<typeof ConditionValueRule>;

/**
 * The kinds of field a filter names: `email`; `subscribed`; `createdAt`/`updatedAt` (timestamp);
 * `data.<path>`; `event.<name>` and `email.<activity>` (event); `segment.<id>`.
 */
export const ConditionFieldKind = z.enum(['email', 'subscribed', 'timestamp', 'data', 'event', 'segment']);
export type ConditionFieldKind = z.infer<typeof ConditionFieldKind>;

/**
 * The operators each field kind takes and the value each needs: the condition engine's table, for
 * builders (a server test keeps the two equal). Any other pair is refused with INVALID_CONDITION.
 */
export const CONDITION_OPERATORS: {
  readonly [K in ConditionFieldKind]: Readonly<Partial<Record<ConditionOperator, ConditionValueRule>>>;
} = {
  email: {
    equals: 'string',
    notEquals: 'string',
    contains: 'string',
    notContains: 'string',
    exists: 'none',
    notExists: 'none',
  },
  subscribed: { equals: 'boolean', notEquals: 'boolean', exists: 'none', notExists: 'none' },
  timestamp: {
    greaterThan: 'date',
    lessThan: 'date',
    greaterThanOrEqual: 'date',
    lessThanOrEqual: 'date',
    within: 'amount',
    olderThan: 'amount',
    exists: 'none',
    notExists: 'none',
  },
  data: {
    equals: 'scalar',
    notEquals: 'scalar',
    contains: 'scalar',
    notContains: 'scalar',
    greaterThan: 'numberOrDate',
    lessThan: 'numberOrDate',
    greaterThanOrEqual: 'numberOrDate',
    lessThanOrEqual: 'numberOrDate',
    within: 'amount',
    olderThan: 'amount',
    exists: 'none',
    notExists: 'none',
  },
  event: {
    triggered: 'none',
    notTriggered: 'none',
    triggeredWithin: 'amount',
    notTriggeredWithin: 'amount',
    triggeredOlderThan: 'amount',
  },
  segment: { memberOfSegment: 'none', notMemberOfSegment: 'none' },
};

/** Limits that keep a condition a cheap query, checked before anything else reads the tree. */
export const CONDITION_LIMITS = { maxDepth: 5, maxFilters: 100, maxGroups: 50 } as const;

export const ConditionFilter = z.object({
  field: z
    .string()
    .min(1)
    .max(200)
    .describe(
      '`email`, `subscribed`, `createdAt`, `updatedAt`, `data.<path>`, `event.<name>`, `email.<activity>` (sent, delivery, open, click, bounce, complaint; past-tense forms accepted) or `segment.<id>`',
    ),
  operator: ConditionOperator,
  value: z
    .unknown()
    .optional()
    .describe('Compared value: a string, number, boolean or ISO date; an amount for time operators'),
  unit: ConditionUnit.optional().describe(
    'Required by within, olderThan, triggeredWithin, triggeredOlderThan, notTriggeredWithin',
  ),
});
export type ConditionFilter = z.infer<typeof ConditionFilter>;

export interface ConditionGroup {
  filters: ConditionFilter[];
  conditions?: ConditionTree;
}
export interface ConditionTree {
  logic: 'AND' | 'OR';
  groups: ConditionGroup[];
}
export interface ConditionGroupInput {
  filters?: ConditionFilter[];
  conditions?: ConditionTreeInput;
}
export interface ConditionTreeInput {
  logic?: 'AND' | 'OR';
  groups: ConditionGroupInput[];
}

export const ConditionGroup: z.ZodType<ConditionGroup, z.ZodTypeDef, ConditionGroupInput> = z.lazy(() =>
  z
    .object({
      filters: z.array(ConditionFilter).default([]).describe('ANDed with each other and with `conditions`'),
      conditions: ConditionTreeShape.optional(),
    })
    .refine((g) => g.filters.length > 0 || g.conditions !== undefined, {
      message: 'A group needs filters or nested conditions',
      path: ['filters'],
    }),
);

/** `{logic, groups[]}`: groups are combined with `logic` (AND by default). */
export const ConditionTreeShape: z.ZodType<ConditionTree, z.ZodTypeDef, ConditionTreeInput> = z.lazy(() =>
  z.object({
    logic: ConditionLogic.default('AND'),
    groups: z.array(ConditionGroup).min(1).max(CONDITION_LIMITS.maxGroups),
  }),
);

/**
 * The condition tree as requests carry it: its depth and size are checked iteratively before
 * the recursive schema runs, so a tree nested thousands of levels deep is a clear error rather
 * than a stack overflow.
 */
export const ConditionTree = z
  .unknown()
  .superRefine((input, ctx) => {
    const problem = conditionSizeProblem(input);
    if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem, fatal: true });
  })
  .pipe(ConditionTreeShape);

function conditionSizeProblem(input: unknown): string | undefined {
  const { maxDepth, maxFilters } = CONDITION_LIMITS;
  let filters = 0;
  const stack: Array<{ node: unknown; depth: number }> = [{ node: input, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: unknown; depth: number };
    if (depth > maxDepth) return `Conditions nest at most ${maxDepth} levels deep`;
    const groups = (node as { groups?: unknown } | null)?.groups;
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      const g = group as { filters?: unknown; conditions?: unknown } | null;
      if (Array.isArray(g?.filters)) filters += g.filters.length;
      if (filters > maxFilters) return `A condition holds at most ${maxFilters} filters`;
      if (g?.conditions !== undefined) stack.push({ node: g.conditions, depth: depth + 1 });
    }
  }
  return undefined;
}

export const conditionSchemas = { ConditionTree: ConditionTreeShape, ConditionGroup, ConditionFilter };
