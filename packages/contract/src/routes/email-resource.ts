import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { CursorQuery, cappedCursorPage, commonErrors, ErrorEnvelope, Timestamp } from '../common.js';
import { meta } from '../meta.js';

const c = initContract();
const dashboard = meta({ auth: 'dashboard' });

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

const emailDetailObject = emailObject.extend({ timeline: z.array(EmailTimelineEntry).describe('Oldest first') });
type EmailDetailObject = typeof emailDetailObject;
export interface EmailDetailSchema extends EmailDetailObject {}
export const EmailDetail: EmailDetailSchema = emailDetailObject;

export const EmailListQuery = CursorQuery.extend({
  contactId: z.string().uuid().optional(),
  status: EmailStatus.optional(),
  campaignId: z.string().uuid().optional(),
  templateId: z.string().uuid().optional(),
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
  },
  { strictStatusCodes: true },
);

export const emailResourceSchemas = { EmailSummary, EmailDetail };
