import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, knownOrDefault, OffsetQuery, offsetPage, success, Timestamp } from '../common.js';
import { meta } from '../meta.js';
import { ConditionTree, ConditionTreeShape } from './conditions.js';
import { RequeueAnswer } from './sending.js';
import { ContentType, Subject, Template } from './templates.js';
import { TopicReference } from './topics.js';

const c = initContract();

export const CampaignStatus = z.enum(['DRAFT', 'SCHEDULED', 'SENDING', 'SENT', 'CANCELLED']);
export type CampaignStatus = z.infer<typeof CampaignStatus>;
export const AudienceType = z.enum(['ALL', 'SEGMENT', 'FILTERED']);
export type AudienceType = z.infer<typeof AudienceType>;

/** A campaign carries a template's content fields, plus its audience, state and counters. */
const campaignObject = Template.extend({
  templateId: z.string().uuid().nullable(),
  status: CampaignStatus,
  audienceType: AudienceType,
  segmentId: z.string().uuid().nullable(),
  audienceCondition: ConditionTreeShape.nullable(),
  topicId: z.string().uuid().nullable().describe('The topic the campaign is about (null: none)'),
  scheduledFor: Timestamp.nullable(),
  totalRecipients: z.number().int().describe('Frozen when sending starts'),
  sentCount: z.number().int(),
  deliveredCount: z.number().int(),
  openedCount: z.number().int(),
  clickedCount: z.number().int(),
  bouncedCount: z.number().int(),
  complainedCount: z.number().int(),
  unsubscribedCount: z.number().int(),
  sentAt: Timestamp.nullable().describe('When the last recipient was processed'),
  cancelledAt: Timestamp.nullable(),
});
type CampaignObject = typeof campaignObject;
/** `Campaign` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface CampaignSchema extends CampaignObject {}
export const Campaign: CampaignSchema = campaignObject;
export type Campaign = z.infer<typeof Campaign>;

/** Create and replace (PUT) take the same fields. */
export const CampaignInput = z.object({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullable().optional(),
  subject: Subject,
  body: z.string().min(1).max(2_000_000).describe('HTML; `{{variables}}` are filled per contact at delivery'),
  from: z.string().trim().toLowerCase().email(),
  fromName: z.string().max(200).nullable().optional(),
  replyTo: z.string().trim().toLowerCase().email().nullable().optional(),
  type: ContentType.default('MARKETING').describe('MARKETING and HEADLESS skip unsubscribed contacts'),
  templateId: z.string().uuid().nullable().optional().describe('The template this campaign was made from'),
  audienceType: AudienceType,
  segmentId: z.string().uuid().nullable().optional().describe('Required when audienceType is SEGMENT'),
  audienceCondition: ConditionTree.nullable().optional().describe('Required when audienceType is FILTERED'),
  topicId: TopicReference.describe(
    'A topic of the project: the campaign reaches only contacts subscribed to it (and subscribed), whatever its type; its List-Unsubscribe leaves only this topic',
  ),
});

export const CampaignListQuery = OffsetQuery.extend({
  status: z.string().optional().describe('DRAFT, SCHEDULED, SENDING, SENT or CANCELLED; anything else is a 400'),
  search: z.string().max(200).optional().describe('Case-insensitive, on name, subject and sender address'),
  sort: knownOrDefault(['name', 'createdAt', 'updatedAt'] as const, 'createdAt').describe(
    '`name`, `createdAt` (default) or `updatedAt`; anything else falls back',
  ),
  dir: knownOrDefault(['asc', 'desc'] as const, 'desc').describe('`asc` or `desc` (default); anything else falls back'),
});

export const CampaignStats = z.object({
  totalRecipients: z.number().int(),
  sent: z.number().int(),
  delivered: z.number().int(),
  opened: z.number().int(),
  clicked: z.number().int(),
  bounced: z.number().int(),
  complained: z.number().int(),
  unsubscribed: z.number().int(),
  cancelled: z.number().int().describe('Recipients never handed to the transport (cancel, or unsubscribed meanwhile)'),
  pending: z.number().int().describe('Recipients still queued or being delivered'),
  rates: z
    .object({
      delivery: z.number(),
      open: z.number(),
      click: z.number(),
      bounce: z.number(),
      complaint: z.number(),
      unsubscribe: z.number(),
    })
    .describe('Fractions 0..1 of `sent` (delivery, bounce: of sent; the others of sent as well)'),
});

export const AudienceCountInput = CampaignInput.pick({
  type: true,
  audienceType: true,
  segmentId: true,
  audienceCondition: true,
  topicId: true,
});

const CampaignId = z.object({ id: z.string().uuid() });
const notFound = { 404: ErrorEnvelope };
/** A secret key, or a member's session (the console) with `X-Project-Id`. */
const dashboard = meta({ auth: 'dashboard', permission: 'project.use' });
/** Audience queries run under the segments' statement timeout. */
const timeout = { 503: ErrorEnvelope };

export const campaignsContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/campaigns',
      summary: 'Create a campaign (DRAFT)',
      metadata: meta({
        auth: 'dashboard',
        permission: 'project.use',
        example: {
          name: 'November newsletter',
          subject: 'News for {{name ?? "you"}}',
          body: '<p>Hi {{name ?? "there"}}, here is what is new.</p>',
          from: 'hello@example.com',
          fromName: 'Acme',
          type: 'MARKETING',
          audienceType: 'ALL',
        },
      }),
      body: CampaignInput,
      responses: { 201: success(Campaign), 400: ErrorEnvelope, 403: ErrorEnvelope, ...commonErrors },
    },
    list: {
      method: 'GET',
      path: '/campaigns',
      summary: 'Campaigns, page by page',
      metadata: dashboard,
      query: CampaignListQuery,
      responses: { 200: offsetPage(Campaign), 400: ErrorEnvelope, ...commonErrors },
    },
    get: {
      method: 'GET',
      path: '/campaigns/:id',
      summary: 'Get a campaign with its counters',
      metadata: dashboard,
      pathParams: CampaignId,
      responses: { 200: Campaign, ...notFound, ...commonErrors },
    },
    replace: {
      method: 'PUT',
      path: '/campaigns/:id',
      summary: 'Replace a DRAFT or SCHEDULED campaign (409 otherwise)',
      metadata: dashboard,
      pathParams: CampaignId,
      body: CampaignInput,
      responses: {
        200: Campaign,
        400: ErrorEnvelope,
        403: ErrorEnvelope,
        409: ErrorEnvelope,
        ...notFound,
        ...commonErrors,
      },
    },
    delete: {
      method: 'DELETE',
      path: '/campaigns/:id',
      summary: 'Delete a campaign (409 while it is sending)',
      metadata: dashboard,
      pathParams: CampaignId,
      body: c.noBody(),
      responses: { 204: c.noBody(), 409: ErrorEnvelope, ...notFound, ...commonErrors },
    },
    duplicate: {
      method: 'POST',
      path: '/campaigns/:id/duplicate',
      summary: 'Copy a campaign into a new DRAFT',
      metadata: dashboard,
      pathParams: CampaignId,
      body: c.noBody(),
      responses: { 201: success(Campaign), ...notFound, ...commonErrors },
    },
    audienceCount: {
      method: 'POST',
      path: '/campaigns/audience-count',
      summary: 'How many contacts an audience would reach if sent now',
      description:
        'Counted as sending freezes it: subscribed contacts only for MARKETING and HEADLESS (and with a `topicId`, whatever the type, only those subscribed to the topic too), suppressed addresses left out. Refused as creating a campaign with this audience would be (422 for a missing or unknown segment or topic, 400 `INVALID_CONDITION` naming the filter).',
      metadata: meta({
        auth: 'dashboard',
        permission: 'project.use',
        example: { type: 'MARKETING', audienceType: 'ALL' },
      }),
      body: AudienceCountInput,
      responses: { 200: z.object({ count: z.number().int() }), 400: ErrorEnvelope, ...timeout, ...commonErrors },
    },
    test: {
      method: 'POST',
      path: '/campaigns/:id/test',
      summary: 'Send the campaign once to one address (with that contact’s data when it exists); no counters move',
      metadata: dashboard,
      pathParams: CampaignId,
      body: z.object({ email: z.string().trim().toLowerCase().email().max(254) }),
      responses: {
        200: success(z.object({ emailId: z.string().uuid(), email: z.string() })),
        403: ErrorEnvelope,
        ...notFound,
        ...commonErrors,
      },
    },
    send: {
      method: 'POST',
      path: '/campaigns/:id/send',
      summary: 'Send now, or schedule with a future `scheduledFor`',
      description:
        '`scheduledFor`: anything a JavaScript Date parses; omitted, null or past sends now (SENDING), future schedules (SCHEDULED). Sending freezes the audience.',
      metadata: dashboard,
      pathParams: CampaignId,
      body: z
        .object({ scheduledFor: z.union([z.string(), z.number()]).nullable().optional() })
        .optional()
        .describe('May be empty'),
      responses: {
        200: success(
          z.object({
            id: z.string().uuid(),
            name: z.string(),
            status: CampaignStatus,
            scheduledFor: Timestamp.nullable(),
            totalRecipients: z.number().int(),
          }),
        ).extend({ message: z.string() }),
        400: ErrorEnvelope,
        403: ErrorEnvelope,
        409: ErrorEnvelope,
        ...notFound,
        ...timeout,
        ...commonErrors,
      },
    },
    cancel: {
      method: 'POST',
      path: '/campaigns/:id/cancel',
      summary: 'Cancel a SCHEDULED or SENDING campaign; what was not handed to the transport is never sent',
      metadata: dashboard,
      pathParams: CampaignId,
      body: c.noBody(),
      responses: {
        200: success(
          z.object({
            id: z.string().uuid(),
            status: CampaignStatus,
            sent: z.number().int().describe('Messages already handed to the transport'),
            cancelled: z.number().int().describe('Messages that will never be sent'),
          }),
        ).extend({ message: z.string() }),
        409: ErrorEnvelope,
        ...notFound,
        ...commonErrors,
      },
    },
    requeueFailed: {
      method: 'POST',
      path: '/campaigns/:id/requeue-failed',
      summary: "Queue the campaign's FAILED messages again; a SENT campaign goes back to SENDING",
      description:
        'Suppressed addresses and unsubscribed contacts (MARKETING, HEADLESS) are refused as sending refuses them and stay FAILED. 409 for a DRAFT, SCHEDULED or CANCELLED campaign.',
      metadata: dashboard,
      pathParams: CampaignId,
      body: c.noBody(),
      responses: {
        200: RequeueAnswer,
        409: ErrorEnvelope,
        ...notFound,
        ...commonErrors,
      },
    },
    stats: {
      method: 'GET',
      path: '/campaigns/:id/stats',
      summary: 'Delivery and engagement counts, attributed through each email',
      metadata: dashboard,
      pathParams: CampaignId,
      responses: { 200: CampaignStats, ...notFound, ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

export const campaignSchemas = { Campaign, CampaignStats };
