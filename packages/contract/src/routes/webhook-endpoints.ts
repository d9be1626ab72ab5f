import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { CursorQuery, cappedCursorPage, commonErrors, ErrorEnvelope, Timestamp } from '../common.js';
import { meta } from '../meta.js';
import { Job, JobAccepted } from './contacts.js';
import { EventTypeFilter, WebhookEvent } from './webhook-events.js';

const c = initContract();
/** Endpoints carry their signing secrets: OWNER or ADMIN, like the secret key. */
const manage = meta({ auth: 'dashboard', permission: 'project.manage' });

/** Endpoints per project at most (documented in README "Webhooks"). */
export const MAX_WEBHOOK_ENDPOINTS = 20;
/** Event-type filters per endpoint at most. */
export const MAX_WEBHOOK_EVENT_TYPES = 50;
/** After a rotation the previous secret keeps signing (a second signature) this long by default. */
export const DEFAULT_ROTATION_OVERLAP_HOURS = 24;

export const WebhookUrl = z
  .string()
  .trim()
  .max(2000)
  .url('must be an absolute http(s) URL')
  .refine((u) => /^https?:\/\//i.test(u), 'the scheme must be http or https')
  .describe('Where events are POSTed; checked against the SSRF guard (see WEBHOOK_ALLOW_PRIVATE_NETWORKS)');

const webhookEndpointObject = z.object({
  id: z.string().uuid(),
  url: z.string(),
  description: z.string().nullable(),
  eventTypes: z.array(z.string()),
  enabled: z.boolean(),
  disabledReason: z.string().nullable().describe('Set when Pigeon disabled the endpoint after 5 days of failures'),
  failingSince: Timestamp.nullable().describe('First failed attempt since the last success'),
  secret: z.string().describe('`whsec_…`: verify signatures with it (Standard Webhooks)'),
  previousSecretExpiresAt: Timestamp.nullable().describe('Until when the replaced secret still signs (rotation)'),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
type WebhookEndpointObject = typeof webhookEndpointObject;
export interface WebhookEndpointSchema extends WebhookEndpointObject {}
export const WebhookEndpoint: WebhookEndpointSchema = webhookEndpointObject;

const EndpointFields = z.object({
  url: WebhookUrl,
  description: z.string().max(500).nullable().optional(),
  eventTypes: z.array(EventTypeFilter).min(1).max(MAX_WEBHOOK_EVENT_TYPES),
  enabled: z.boolean().optional(),
});

export const WebhookDeliveryStatus = z.enum(['PENDING', 'SENDING', 'SUCCEEDED', 'FAILED']);
export type WebhookDeliveryStatus = z.infer<typeof WebhookDeliveryStatus>;
export const WebhookAttemptTrigger = z.enum(['SCHEDULED', 'REPLAY']);
export type WebhookAttemptTrigger = z.infer<typeof WebhookAttemptTrigger>;

export const WebhookAttempt = z.object({
  at: Timestamp,
  trigger: WebhookAttemptTrigger,
  statusCode: z.number().int().nullable().describe('Null when no answer arrived'),
  durationMs: z.number().int(),
  response: z.string().nullable().describe('The first 1 KB of the answer'),
  error: z.string().nullable(),
});

const webhookDeliveryObject = z.object({
  id: z.string().uuid(),
  webhookId: z.string().describe('The `webhook-id` header: the same on every attempt of this delivery'),
  eventType: z.string(),
  status: WebhookDeliveryStatus,
  attemptCount: z.number().int(),
  nextAttemptAt: Timestamp.nullable(),
  createdAt: Timestamp,
  payload: WebhookEvent,
  attempts: z.array(WebhookAttempt).describe('Newest first, at most the last 20'),
});
type WebhookDeliveryObject = typeof webhookDeliveryObject;
export interface WebhookDeliverySchema extends WebhookDeliveryObject {}
export const WebhookDelivery: WebhookDeliverySchema = webhookDeliveryObject;

const webhookDeliveryPage = cappedCursorPage(WebhookDelivery, 'deliveries');
type WebhookDeliveryPageObject = typeof webhookDeliveryPage;
export interface WebhookDeliveryPageSchema extends WebhookDeliveryPageObject {}
/** Named so declaration files refer to it rather than spell out every payload type per route. */
export const WebhookDeliveryPage: WebhookDeliveryPageSchema = webhookDeliveryPage;

const webhookEndpointList = z.object({ data: z.array(WebhookEndpoint) });
type WebhookEndpointListObject = typeof webhookEndpointList;
export interface WebhookEndpointListSchema extends WebhookEndpointListObject {}
export const WebhookEndpointList: WebhookEndpointListSchema = webhookEndpointList;

const Id = z.object({ id: z.string().uuid() });
const DeliveryPath = z.object({ id: z.string().uuid(), deliveryId: z.string().uuid() });
const RecoveryPath = z.object({ id: z.string().uuid(), jobId: z.string().uuid() });

/** Which failed deliveries a recovery sends again: those created in `[after, before)`. */
export const DeliveryRecovery = z
  .object({
    after: z.string().datetime({ offset: true }).describe('Deliveries created at or after this time'),
    before: z
      .string()
      .datetime({ offset: true })
      .optional()
      .describe('Deliveries created before this time (default: when the recovery is asked for)'),
  })
  .refine((r) => r.before === undefined || Date.parse(r.after) < Date.parse(r.before), {
    path: ['before'],
    message: 'must be later than `after`',
  });
const notFoundErrors = { 403: ErrorEnvelope, 404: ErrorEnvelope, ...commonErrors };

export const webhookEndpointsContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/webhook-endpoints',
      summary: `Add a webhook endpoint (at most ${MAX_WEBHOOK_ENDPOINTS} per project); the answer carries its signing secret`,
      metadata: manage,
      body: EndpointFields,
      responses: { 201: WebhookEndpoint, 403: ErrorEnvelope, ...commonErrors },
    },
    list: {
      method: 'GET',
      path: '/webhook-endpoints',
      summary: "The project's webhook endpoints",
      metadata: manage,
      responses: { 200: WebhookEndpointList, 403: ErrorEnvelope, ...commonErrors },
    },
    get: {
      method: 'GET',
      path: '/webhook-endpoints/:id',
      summary: 'Get a webhook endpoint',
      metadata: manage,
      pathParams: Id,
      responses: { 200: WebhookEndpoint, ...notFoundErrors },
    },
    update: {
      method: 'PATCH',
      path: '/webhook-endpoints/:id',
      summary: 'Change a webhook endpoint; enabling it again clears what disabled it',
      metadata: manage,
      pathParams: Id,
      body: EndpointFields.partial(),
      responses: { 200: WebhookEndpoint, ...notFoundErrors },
    },
    delete: {
      method: 'DELETE',
      path: '/webhook-endpoints/:id',
      summary: 'Remove a webhook endpoint and its deliveries',
      metadata: manage,
      pathParams: Id,
      body: c.noBody(),
      responses: { 204: c.noBody(), ...notFoundErrors },
    },
    rotateSecret: {
      method: 'POST',
      path: '/webhook-endpoints/:id/rotate-secret',
      summary: 'A new signing secret; the old one keeps signing (a second signature) during the overlap',
      metadata: manage,
      pathParams: Id,
      body: z.object({
        overlapHours: z
          .number()
          .min(0)
          .max(168)
          .default(DEFAULT_ROTATION_OVERLAP_HOURS)
          .describe('How long both secrets sign, 0 to 168 hours (default 24)'),
      }),
      responses: { 200: WebhookEndpoint, ...notFoundErrors },
    },
    test: {
      method: 'POST',
      path: '/webhook-endpoints/:id/test',
      summary: 'Send a `webhook.test` event to the endpoint now (whatever its filters); returns the delivery',
      metadata: manage,
      pathParams: Id,
      body: z.object({}).optional(),
      responses: { 202: WebhookDelivery, ...notFoundErrors },
    },
    deliveries: {
      method: 'GET',
      path: '/webhook-endpoints/:id/deliveries',
      summary: 'Deliveries to the endpoint, newest first, each with its attempts (cursor pages)',
      metadata: manage,
      pathParams: Id,
      query: CursorQuery.extend({
        status: WebhookDeliveryStatus.optional(),
        eventType: z.string().max(200).optional(),
      }),
      responses: { 200: WebhookDeliveryPage, ...notFoundErrors },
    },
    delivery: {
      method: 'GET',
      path: '/webhook-endpoints/:id/deliveries/:deliveryId',
      summary: 'One delivery with its attempts',
      metadata: manage,
      pathParams: DeliveryPath,
      responses: { 200: WebhookDelivery, ...notFoundErrors },
    },
    replay: {
      method: 'POST',
      path: '/webhook-endpoints/:id/deliveries/:deliveryId/replay',
      summary: 'Send a delivery again now, with the same `webhook-id` and payload (a new attempt)',
      metadata: manage,
      pathParams: DeliveryPath,
      body: z.object({}).optional(),
      responses: { 202: WebhookDelivery, 409: ErrorEnvelope, ...notFoundErrors },
    },
    recover: {
      method: 'POST',
      path: '/webhook-endpoints/:id/recoveries',
      summary: 'Send again every FAILED delivery created in a time range (a job: poll GET …/recoveries/:jobId)',
      description:
        'After an outage of your endpoint: each FAILED delivery created at or after `after` and before `before` is attempted once more, as a replay (same `webhook-id` and payload). The job walks the range in statements of at most 1,000 deliveries; its `processed` counts deliveries looked at, `updated` those sent again, `skipped` those that were not FAILED. The endpoint must be enabled (409).',
      metadata: meta({
        auth: 'dashboard',
        permission: 'project.manage',
        example: { after: '2026-11-20T00:00:00Z', before: '2026-11-23T00:00:00Z' },
      }),
      pathParams: Id,
      body: DeliveryRecovery,
      responses: { 202: JobAccepted, 409: ErrorEnvelope, ...notFoundErrors },
    },
    recovery: {
      method: 'GET',
      path: '/webhook-endpoints/:id/recoveries/:jobId',
      summary: 'Poll a recovery of failed deliveries',
      metadata: manage,
      pathParams: RecoveryPath,
      responses: { 200: Job, ...notFoundErrors },
    },
  },
  { strictStatusCodes: true },
);

export const webhookEndpointSchemas = { WebhookEndpoint, WebhookDelivery, WebhookAttempt };
