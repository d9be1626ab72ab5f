import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { CursorQuery, commonErrors, Timestamp } from '../common.js';
import { meta } from '../meta.js';
import { AudienceType } from './campaigns.js';
import { COUNTED_FROM_ROLLUP, eventsPage, RangeTotals, TimeRange } from './events.js';
import { TagFilter } from './send-options.js';

const c = initContract();

export const ActivityType = z
  .enum([
    'email.sent',
    'email.delivery',
    'email.open',
    'email.click',
    'email.bounce',
    'email.complaint',
    'contact.subscribed',
    'contact.unsubscribed',
    'contact.topic.subscribed',
    'contact.topic.unsubscribed',
    'event',
  ])
  .describe('An emitted event name, or `event` for the custom events your code tracked');
export type ActivityType = z.infer<typeof ActivityType>;

export const ActivityItem = z.object({
  id: z.string().uuid().describe('Id of the underlying event'),
  type: ActivityType,
  name: z.string().describe('The event name as stored (the custom name for `event`)'),
  contactId: z.string().uuid().nullable(),
  contactEmail: z.string().nullable(),
  emailId: z
    .string()
    .uuid()
    .nullable()
    .describe('The email this activity is about, for email.* and link-driven changes'),
  subject: z.string().nullable(),
  link: z.string().nullable().describe('The original link, for email.click'),
  data: z.record(z.unknown().describe('Event data value')),
  createdAt: Timestamp,
});

export const UpcomingType = z.enum(['campaign', 'workflow']);
export type UpcomingType = z.infer<typeof UpcomingType>;

export const UpcomingItem = z.object({
  type: UpcomingType,
  id: z.string().uuid().describe('The campaign, or the waiting workflow execution'),
  name: z.string().describe('The campaign’s or the workflow’s name'),
  scheduledFor: Timestamp,
  audienceType: AudienceType.optional().describe('Campaigns'),
  workflowId: z.string().uuid().optional().describe('Workflow executions'),
  contactId: z.string().uuid().optional().describe('Workflow executions'),
  step: z
    .object({ id: z.string().uuid(), name: z.string(), type: z.string() })
    .optional()
    .describe('Workflow executions: the step that runs (or times out) then'),
});

const TypesFilter = z
  .string()
  .max(500)
  .transform((s, ctx) => {
    const types = s
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    for (const t of types) {
      if (!ActivityType.safeParse(t).success) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `unknown activity type ${t}` });
        return z.NEVER;
      }
    }
    return types as Array<z.infer<typeof ActivityType>>;
  })
  .describe('Comma-separated activity types, e.g. `email.open,email.click`; omitted means all');

const dashboard = meta({ auth: 'dashboard', permission: 'project.use' });

export const activityContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/activity',
      summary: "The project's email and contact activity, newest first",
      description:
        'One feed of sends, deliveries, opens, clicks, bounces, complaints, subscription changes and tracked events, filterable by contact, type and time range.',
      metadata: dashboard,
      query: CursorQuery.merge(TimeRange).extend({
        contactId: z.string().uuid().optional(),
        types: TypesFilter.optional(),
        tag: TagFilter.optional(),
      }),
      responses: { 200: eventsPage(ActivityItem), ...commonErrors },
    },
    stats: {
      method: 'GET',
      path: '/activity/stats',
      summary: 'Activity totals per type and per day over a time range (default: the last 30 days)',
      description: COUNTED_FROM_ROLLUP,
      metadata: dashboard,
      query: TimeRange,
      responses: {
        200: RangeTotals.extend({ byType: z.array(z.object({ type: ActivityType, count: z.number().int() })) }),
        ...commonErrors,
      },
    },
    types: {
      method: 'GET',
      path: '/activity/types',
      summary: 'Every activity type with what it means and how many there were in a time range (default: 30 days)',
      description: COUNTED_FROM_ROLLUP,
      metadata: dashboard,
      query: TimeRange,
      responses: {
        200: z.array(z.object({ type: ActivityType, description: z.string(), count: z.number().int() })),
        ...commonErrors,
      },
    },
    recentCount: {
      method: 'GET',
      path: '/activity/recent-count',
      summary: 'How many activities happened in the last `minutes` (default 60)',
      metadata: dashboard,
      query: z.object({
        minutes: z.coerce
          .number()
          .int()
          .min(1)
          .max(60 * 24 * 31)
          .default(60),
        types: TypesFilter.optional(),
      }),
      responses: { 200: z.object({ count: z.number().int(), since: Timestamp }), ...commonErrors },
    },
    upcoming: {
      method: 'GET',
      path: '/activity/upcoming',
      summary: 'What Pigeon will do on its own: scheduled campaigns and waiting workflow steps, soonest first',
      metadata: dashboard,
      query: z.object({ limit: z.coerce.number().int().min(1).max(100).default(20) }),
      responses: { 200: z.object({ data: z.array(UpcomingItem) }), ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

export const activitySchemas = { ActivityItem, ActivityType, UpcomingItem };
