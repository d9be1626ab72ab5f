import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  CursorQuery,
  cappedCursorPage,
  cappedTotal,
  commonErrors,
  ErrorEnvelope,
  LIST_TOTAL_CAP,
  success,
  Timestamp,
} from '../common.js';
import { meta } from '../meta.js';
import { ContactData, ContactEmail, Job, JobAccepted } from './contacts.js';

const c = initContract();

export const EventName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200)
  // The C0 and C1 controls (Unicode's Cc) spelled as a range, not `\P{Cc}`: OpenAPI tools compile
  // patterns without the `u` flag, where `\P{…}` means something else.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters refused
  .regex(/^[^\u0000-\u001F\u007F-\u009F]+$/, 'must not contain control characters')
  .describe(
    'Custom event name, e.g. `signed-up`. Reserved: contact.subscribed, contact.unsubscribed, contact.topic.*, email.*, segment.<slug>.entry|exit',
  );

export const IdempotencyHeaders = z.object({
  'idempotency-key': z
    .string()
    .optional()
    .describe(
      '1 to 255 printable ASCII characters; a reused key answers 409 IDEMPOTENCY_KEY_REUSED while it is kept ' +
        '(24 hours by default; 60 minutes for POST /v1/track), with the first response when it succeeded; ' +
        'reused for another request (another endpoint or body) it answers 422 IDEMPOTENCY_KEY_REUSED. ' +
        'Time-ordered keys (a UUID version 7, as the SDK sends) cost the server less than random ones',
    ),
});

export const TrackBody = z.object({
  email: ContactEmail,
  event: EventName,
  subscribed: z.boolean().optional().describe('New contacts default to true; existing contacts keep their state'),
  data: ContactData.optional(),
});

export const TrackResult = z.object({
  contact: z.string().uuid().describe('Contact id'),
  event: z.string().uuid().describe('Event id'),
  timestamp: Timestamp,
});

const eventObject = z.object({
  id: z.string().uuid(),
  name: z.string(),
  contactId: z.string().uuid().nullable(),
  contactEmail: z.string().nullable(),
  data: z.record(z.unknown().describe('Event data value')),
  createdAt: Timestamp,
});
type EventObject = typeof eventObject;
/** `Event` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface EventSchema extends EventObject {}
export const Event: EventSchema = eventObject;

/** How far back a list of events reaches: older events were removed by the project's retention. */
export const EventsReach = z.object({
  retainedSince: Timestamp.describe(
    "The oldest time this list can reach: events older than the project's event retention (`retention.eventsDays`) are removed",
  ),
});
/** Where an event list's first page stops counting (`LIST_TOTAL_CAP`, as every long list). */
export const EVENTS_TOTAL_CAP = LIST_TOTAL_CAP;

/** `total` of an event list: exact up to `EVENTS_TOTAL_CAP`, then capped and flagged. */
export const EventsTotal = cappedTotal('events');
export const eventsPage = <T extends z.ZodTypeAny>(item: T) => cappedCursorPage(item, 'events').merge(EventsReach);

export const TimeRange = z.object({
  from: z.string().datetime({ offset: true }).optional().describe('Inclusive lower bound (ISO 8601)'),
  to: z.string().datetime({ offset: true }).optional().describe('Exclusive upper bound (ISO 8601)'),
});

/** How the stats endpoints count (events/stats, activity/stats, activity/types). */
export const COUNTED_FROM_ROLLUP =
  "Counted from the hourly rollup analytics reads: the counts outlive raw-event retention and cost the same however many events the project has. The range is widened to whole UTC hours (the answer's `from` and `to` say which, where the endpoint returns them); counts trail new events by a few seconds.";

/** Totals over a time range, per day: the shared part of the stats endpoints. */
export const RangeTotals = z.object({
  from: Timestamp,
  to: Timestamp,
  total: z.number().int().describe('Every event in the range'),
  byDay: z.array(z.object({ day: z.string().describe('YYYY-MM-DD (UTC)'), count: z.number().int() })),
});

const dashboard = meta({ auth: 'dashboard', permission: 'project.use' });
const EventNamePath = z.object({ eventName: z.string().min(1).max(200) });

const track = {
  method: 'POST',
  headers: IdempotencyHeaders,
  body: TrackBody,
  responses: { 200: success(TrackResult), 409: ErrorEnvelope, 403: ErrorEnvelope, ...commonErrors },
} as const;

export const eventsContract = c.router(
  {
    track: {
      ...track,
      path: '/v1/track',
      summary: 'Track an event for a contact (public or secret key); creates the contact if unknown',
      metadata: meta({ auth: 'track', checkKeyInHandler: true }),
    },
    trackFromDashboard: {
      ...track,
      path: '/events/track',
      summary: 'Track an event (dashboard alias of POST /v1/track, same rules)',
      metadata: dashboard,
    },
    list: {
      method: 'GET',
      path: '/events',
      summary: 'Recent events, newest first',
      metadata: dashboard,
      query: CursorQuery.merge(TimeRange).extend({ name: z.string().max(200).optional() }),
      responses: { 200: eventsPage(Event), ...commonErrors },
    },
    stats: {
      method: 'GET',
      path: '/events/stats',
      summary: 'Event counts per name and per day over a time range (default: the last 30 days)',
      description: COUNTED_FROM_ROLLUP,
      metadata: dashboard,
      query: TimeRange,
      responses: {
        200: RangeTotals.extend({ byName: z.array(z.object({ name: z.string(), count: z.number().int() })) }),
        ...commonErrors,
      },
    },
    names: {
      method: 'GET',
      path: '/events/names',
      summary: 'Distinct event names with counts and when each was last seen',
      metadata: dashboard,
      responses: {
        200: z.array(z.object({ name: z.string(), count: z.number().int(), lastSeen: Timestamp })),
        ...commonErrors,
      },
    },
    byContact: {
      method: 'GET',
      path: '/events/contact/:contactId',
      summary: 'Events of one contact, newest first',
      metadata: dashboard,
      pathParams: z.object({ contactId: z.string().uuid() }),
      query: CursorQuery,
      responses: { 200: eventsPage(Event), 404: ErrorEnvelope, ...commonErrors },
    },
    jobStatus: {
      method: 'GET',
      path: '/events/jobs/:jobId',
      summary: 'Poll an event deletion job',
      metadata: dashboard,
      pathParams: z.object({ jobId: z.string().uuid() }),
      responses: { 200: Job, 404: ErrorEnvelope, ...commonErrors },
    },
    usage: {
      method: 'GET',
      path: '/events/:eventName/usage',
      summary: 'Workflows, segments and campaigns that reference an event name',
      metadata: dashboard,
      pathParams: EventNamePath,
      responses: {
        200: z.object({
          name: z.string(),
          workflows: z.array(z.object({ id: z.string(), name: z.string() })),
          segments: z.array(z.object({ id: z.string(), name: z.string() })),
          campaigns: z.array(z.object({ id: z.string(), name: z.string() })),
        }),
        ...commonErrors,
      },
    },
    deleteByName: {
      method: 'DELETE',
      path: '/events/:eventName',
      summary: 'Delete every event with this name (queued; poll GET /events/jobs/:jobId)',
      metadata: dashboard,
      pathParams: EventNamePath,
      body: c.noBody(),
      responses: { 202: JobAccepted, ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

export const eventSchemas = { TrackResult, Event };
