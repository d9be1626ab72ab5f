import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { CursorQuery, cappedCursorPage, commonErrors, ErrorEnvelope, Timestamp } from '../common.js';
import { meta } from '../meta.js';

const c = initContract();
const dashboard = meta({ auth: 'dashboard', permission: 'project.use' });

/**
 * What became of an email. The names are the ones `emails` rows keep, plus two derived ones:
 * SCHEDULED (queued with a `sendAt` still ahead) and DELIVERED (sent, and the receiving server
 * accepted it).
 */
export const EmailStatus = z.enum([
  'QUEUED',
  'SCHEDULED',
  'SENDING',
  'SENT',
  'DELIVERED',
  'BOUNCED',
  'COMPLAINED',
  'FAILED',
  'CANCELLED',
]);
export type EmailStatus = z.infer<typeof EmailStatus>;

/** How far ahead `sendAt` may be (documented in README "Webhooks"). */
export const SEND_AT_MAX_DAYS = 30;

export const EmailTimelineEntry = z.object({
  type: z
    .string()
    .describe('`email.queued`, `email.scheduled`, an `email.*` event, `email.failed` or `email.cancelled`'),
  at: Timestamp,
  data: z.record(z.unknown()).describe('What the event recorded (link of a click, reason of a bounce…)'),
});

const emailObject = z.object({
  id: z.string().uuid(),
  status: EmailStatus,
  to: z.string(),
  toName: z.string().nullable(),
  from: z.string(),
  fromName: z.string().nullable(),
  subject: z.string(),
  source: z.string().describe('What made it: TRANSACTIONAL (`/v1/send`), CAMPAIGN, WORKFLOW…'),
  contactId: z.string().uuid().nullable(),
  templateId: z.string().uuid().nullable(),
  campaignId: z.string().uuid().nullable(),
  workflowId: z.string().uuid().nullable(),
  workflowExecutionId: z.string().uuid().nullable(),
  sendAt: Timestamp.nullable().describe('When a scheduled email is (or was) due'),
  sentAt: Timestamp.nullable(),
  deliveredAt: Timestamp.nullable(),
  openedAt: Timestamp.nullable(),
  clickedAt: Timestamp.nullable(),
  bouncedAt: Timestamp.nullable(),
  complainedAt: Timestamp.nullable(),
  opens: z.number().int(),
  clicks: z.number().int(),
  lastError: z.string().nullable(),
  contentCleared: z
    .boolean()
    .describe(
      "True when the project's content retention (`retention.contentDays`) emptied this message's HTML, text, headers and attachments; its metadata stays",
    ),
  createdAt: Timestamp,
});
type EmailObject = typeof emailObject;
export interface EmailSummarySchema extends EmailObject {}
export const EmailSummary: EmailSummarySchema = emailObject;

/** What made an email. */
export const EmailSource = z.enum(['TRANSACTIONAL', 'CAMPAIGN', 'CAMPAIGN_TEST', 'WORKFLOW']);
export type EmailSource = z.infer<typeof EmailSource>;

const Copy = z.object({ email: z.string(), name: z.string().nullable() });

const emailDetailObject = emailObject.extend({
  timeline: z.array(EmailTimelineEntry).describe('Oldest first'),
  cc: z.array(Copy).describe('Copies shown in the message'),
  bcc: z.array(Copy).describe('Blind copies (envelope only, never in the headers)'),
  replyTo: z.string().nullable(),
  tags: z.record(z.string()).describe('The tags the send named (empty when none)'),
  attempts: z.number().int().describe('Times delivery took the message up (the first try included)'),
  relay: z
    .string()
    .nullable()
    .describe('The relay that accepted the message (a name of GET /config `relays`); null until one did'),
  content: z
    .object({
      html: z.string().nullable(),
      text: z.string().nullable(),
      headers: z.record(z.string()).describe('The custom headers the send asked for'),
      attachments: z.array(
        z.object({ filename: z.string(), contentType: z.string().nullable(), size: z.number().int() }),
      ),
    })
    .nullable()
    .describe(
      'The message as accepted, while content retention keeps it; null once cleared, and for campaign mail, which is composed per contact at delivery (its campaign holds the body)',
    ),
});
type EmailDetailObject = typeof emailDetailObject;
export interface EmailDetailSchema extends EmailDetailObject {}
export const EmailDetail: EmailDetailSchema = emailDetailObject;

export const EmailListQuery = CursorQuery.extend({
  contactId: z.string().uuid().optional(),
  status: EmailStatus.optional(),
  campaignId: z.string().uuid().optional(),
  templateId: z.string().uuid().optional(),
  source: EmailSource.optional(),
  to: z.string().trim().toLowerCase().email().max(254).optional().describe('Sent to this address'),
  after: z.string().datetime({ offset: true }).optional().describe('Created at or after'),
  before: z.string().datetime({ offset: true }).optional().describe('Created before'),
});

const emailPage = cappedCursorPage(EmailSummary, 'emails');
type EmailPageObject = typeof emailPage;
export interface EmailPageSchema extends EmailPageObject {}
export const EmailPage: EmailPageSchema = emailPage;

const Id = z.object({ id: z.string().uuid() });

export const emailResourceContract = c.router(
  {
    get: {
      method: 'GET',
      path: '/emails/:id',
      summary: 'One email: recipient, sender, subject, where it came from, status and its timeline',
      metadata: dashboard,
      pathParams: Id,
      responses: { 200: EmailDetail, 404: ErrorEnvelope, ...commonErrors },
    },
    list: {
      method: 'GET',
      path: '/emails',
      summary: 'Emails of the project, newest first, with filters (cursor pages)',
      metadata: dashboard,
      query: EmailListQuery,
      responses: { 200: EmailPage, ...commonErrors },
    },
    cancel: {
      method: 'POST',
      path: '/emails/:id/cancel',
      summary: 'Cancel an email not yet handed to the transport (scheduled, or waiting in the queue)',
      description: 'Answers 409 once the email is being sent or was sent.',
      metadata: dashboard,
      pathParams: Id,
      body: z.object({}).optional(),
      responses: { 200: EmailSummary, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, ...commonErrors },
    },
    requeue: {
      method: 'POST',
      path: '/emails/:id/requeue',
      summary: 'Queue a FAILED email again, with a new lifetime',
      description:
        'Refused with 409 as sending refuses it: a suppressed address, MARKETING mail to an unsubscribed contact, mail of a cancelled campaign; and when the email is not FAILED.',
      metadata: dashboard,
      pathParams: Id,
      body: z.object({}).optional(),
      responses: { 200: EmailSummary, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

export const emailResourceSchemas = { EmailSummary, EmailDetail };
