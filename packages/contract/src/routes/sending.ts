import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  BareError,
  commonErrors,
  ErrorEnvelope,
  knownOrDefault,
  OffsetQuery,
  offsetPage,
  success,
  Timestamp,
} from '../common.js';
import { meta } from '../meta.js';
import { ContactData } from './contacts.js';
import { SuppressionReason } from './deliverability.js';
import { IdempotencyHeaders } from './events.js';
import { Mailbox, Mailboxes, SendWarning, sendOptionFields } from './send-options.js';

const c = initContract();
const dashboard = meta({ auth: 'dashboard' });
const Id = z.object({ id: z.string().uuid() });

// ---- Domains ----

export const DnsRecord = z.object({
  type: z.literal('TXT'),
  name: z.string(),
  value: z.string(),
  purpose: z.enum(['dkim', 'spf', 'dmarc']),
  required: z.boolean().describe('Only the DKIM record is required for verification; SPF and DMARC are recommended'),
  status: z.enum(['verified', 'missing', 'mismatch', 'unchecked']),
});

const domainObject = z.object({
  id: z.string().uuid(),
  domain: z.string(),
  status: z.enum(['pending', 'verified']),
  verifiedAt: Timestamp.nullable(),
  lastCheckedAt: Timestamp.nullable(),
  dkimSelector: z.string(),
  records: z.array(DnsRecord),
  note: z.string().nullable().describe('Why the domain is in its state, e.g. verified at once with the local outbox'),
  createdAt: Timestamp,
});
type DomainObject = typeof domainObject;
/** `Domain` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface DomainSchema extends DomainObject {}
export const Domain: DomainSchema = domainObject;

export const DomainName = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(
    /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
    'must be a domain name such as example.com',
  );

export const domainsContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/domains',
      summary: 'Add a sender domain; returns the DNS records to publish (DKIM, plus SPF and DMARC suggestions)',
      metadata: dashboard,
      body: z.object({ domain: DomainName }),
      responses: { 201: Domain, 403: ErrorEnvelope, 409: ErrorEnvelope, ...commonErrors },
    },
    list: {
      method: 'GET',
      path: '/domains/project/:projectId',
      summary: "The project's domains, verified and pending",
      metadata: dashboard,
      pathParams: z.object({ projectId: z.string().uuid() }),
      responses: { 200: z.array(Domain), 404: ErrorEnvelope, ...commonErrors },
    },
    verify: {
      method: 'GET',
      path: '/domains/:id/verify',
      summary: "Check the domain's DNS records now",
      metadata: dashboard,
      pathParams: Id,
      responses: { 200: Domain, 404: ErrorEnvelope, ...commonErrors },
    },
    delete: {
      method: 'DELETE',
      path: '/domains/:id',
      summary: 'Remove a domain (409 while a template sends from it)',
      metadata: dashboard,
      pathParams: Id,
      body: c.noBody(),
      responses: { 204: c.noBody(), 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

// ---- Templates ----

export const ContentType = z.enum(['TRANSACTIONAL', 'MARKETING', 'HEADLESS']);
export type ContentType = z.infer<typeof ContentType>;
export const Subject = z
  .string()
  .min(1)
  .max(998)
  .regex(/^[^\r\n]*$/, 'must not contain line breaks');

const templateObject = z.object({
  id: z.string().uuid(),
  name: z.string(),
  description: z.string().nullable(),
  subject: z.string(),
  body: z.string(),
  from: z.string().email(),
  fromName: z.string().nullable(),
  replyTo: z.string().email().nullable(),
  type: ContentType,
  projectId: z.string().uuid(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
type TemplateObject = typeof templateObject;
/** `Template` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface TemplateSchema extends TemplateObject {}
export const Template: TemplateSchema = templateObject;

const TemplateFields = z.object({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullable().optional(),
  subject: Subject,
  body: z.string().min(1).max(2_000_000),
  from: z.string().trim().toLowerCase().email(),
  fromName: z.string().max(200).nullable().optional(),
  replyTo: z.string().trim().toLowerCase().email().nullable().optional(),
  type: ContentType.default('MARKETING'),
});

export const TemplateListQuery = OffsetQuery.extend({
  type: ContentType.optional(),
  search: z.string().max(200).optional().describe('Case-insensitive, on name, description and subject'),
  sort: knownOrDefault(['name', 'createdAt', 'updatedAt'] as const, 'createdAt'),
  dir: knownOrDefault(['asc', 'desc'] as const, 'desc'),
});

export const templatesContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/templates',
      summary: 'Create a template',
      metadata: meta({ auth: 'dashboard', errorStyle: 'bare' }),
      body: TemplateFields,
      responses: { 201: Template, 400: BareError, 403: ErrorEnvelope, ...commonErrors },
    },
    list: {
      method: 'GET',
      path: '/templates',
      summary: 'List templates (offset pagination, type filter, search, sort)',
      metadata: dashboard,
      query: TemplateListQuery,
      responses: { 200: offsetPage(Template), ...commonErrors },
    },
    get: {
      method: 'GET',
      path: '/templates/:id',
      summary: 'Get a template',
      metadata: dashboard,
      pathParams: Id,
      responses: { 200: Template, 404: ErrorEnvelope, ...commonErrors },
    },
    update: {
      method: 'PATCH',
      path: '/templates/:id',
      summary: 'Update a template',
      metadata: dashboard,
      pathParams: Id,
      body: TemplateFields.partial().omit({ type: true }).extend({ type: ContentType.optional() }),
      responses: { 200: Template, 403: ErrorEnvelope, 404: ErrorEnvelope, ...commonErrors },
    },
    delete: {
      method: 'DELETE',
      path: '/templates/:id',
      summary: 'Delete a template (409 while workflow steps send it; campaigns keep their own copy)',
      metadata: dashboard,
      pathParams: Id,
      body: c.noBody(),
      responses: { 204: c.noBody(), 404: ErrorEnvelope, 409: ErrorEnvelope, ...commonErrors },
    },
    duplicate: {
      method: 'POST',
      path: '/templates/:id/duplicate',
      summary: 'Duplicate a template; returns the new template (its id is the new id)',
      metadata: dashboard,
      pathParams: Id,
      body: c.noBody(),
      responses: { 201: Template, 404: ErrorEnvelope, ...commonErrors },
    },
    usage: {
      method: 'GET',
      path: '/templates/:id/usage',
      summary: 'Campaigns and workflow steps that use the template',
      metadata: dashboard,
      pathParams: Id,
      responses: {
        200: z.object({
          campaigns: z.array(z.object({ id: z.string(), name: z.string() })),
          workflowSteps: z.array(z.object({ id: z.string(), workflowId: z.string(), name: z.string() })),
        }),
        404: ErrorEnvelope,
        ...commonErrors,
      },
    },
  },
  { strictStatusCodes: true },
);

// ---- POST /v1/send ----

/** A recipient or sender: a plain address, an RFC 5322 string with a display name, or `{ name, email }`. */
export const Recipient = Mailbox;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export const Attachment = z.object({
  filename: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^\r\n/\\]+$/, 'must be a plain file name'),
  content: z.string().min(1).describe('Base64-encoded bytes'),
  contentType: z.string().max(255).optional(),
});

/** The format of a `/v1/send` body (Plunk's `type`): HTML as is, or Markdown rendered to HTML. */
export const BodyFormat = z.enum(['html', 'markdown']);
export type BodyFormat = z.infer<typeof BodyFormat>;

const sendBodyObject = z.object({
  to: Mailboxes.describe('Recipient(s), processed one by one (each gets its own message)'),
  subject: Subject.optional(),
  body: z.string().min(1).max(20_000_000).optional(),
  template: z.string().uuid().optional(),
  from: Mailbox.optional(),
  name: z.string().max(200).optional().describe('Deprecated: use `from: { name, email }`'),
  subscribed: z.boolean().optional(),
  data: ContactData.optional(),
  headers: z
    .record(
      z
        .string()
        .max(998)
        .regex(/^[^\r\n]*$/, 'must not contain CR or LF'),
    )
    .refine((h) => Object.keys(h).every((k) => HEADER_NAME.test(k)), 'header names must be RFC 5322 field names')
    .optional(),
  reply: Mailbox.optional().describe('Reply-To: an address, with a display name if wanted'),
  type: BodyFormat.optional().describe(
    'How `body` is written: `html` (default) or `markdown`, rendered to HTML with raw HTML in it escaped',
  ),
  attachments: z.array(Attachment).max(10).optional(),
  tracking: z
    .boolean()
    .optional()
    .describe("Open and click tracking for this send; omitted follows the project's trackingMode"),
  ...sendOptionFields,
  sendAt: z
    .string()
    .datetime({ offset: true })
    .optional()
    .describe(
      'Send later: an ISO date-time at most 30 days ahead (a past time sends now); cancel with POST /emails/:id/cancel',
    ),
});
type SendBodyObject = typeof sendBodyObject;
/** `SendBody` under a name of its own: `/v1/send` and each message of the batch refer to it. */
export interface SendBodySchema extends SendBodyObject {}
export const SendBody: SendBodySchema = sendBodyObject;

const sendResultObject = z.object({
  emails: z.array(
    z.object({
      contact: z.object({ id: z.string().uuid(), email: z.string() }),
      email: z.string().uuid().describe('Email id'),
    }),
  ),
  skipped: z
    .array(
      z.object({
        contact: z.object({ id: z.string().uuid(), email: z.string() }),
        reason: z
          .enum(['unsubscribed', 'suppressed'])
          .describe(
            '`unsubscribed`: MARKETING content to an unsubscribed contact; `suppressed`: the address hard-bounced or complained (see GET /suppressions)',
          ),
        suppression: SuppressionReason.optional().describe(
          'Why the address is suppressed, when `reason` is `suppressed`',
        ),
      }),
    )
    .describe('Recipients not sent to, with the reason: nothing is dropped silently'),
  warnings: z
    .array(SendWarning)
    .describe('What was accepted but may not be what was meant; `strict: true` refuses instead (422)'),
  timestamp: Timestamp,
});
type SendResultObject = typeof sendResultObject;
/** `SendResult` under a name of its own: `/v1/send` and each result of the batch refer to it. */
export interface SendResultSchema extends SendResultObject {}
export const SendResult: SendResultSchema = sendResultObject;

/** The `/v1/send` example of the OpenAPI documents: it works as sent once `example.com` is a verified domain. */
const SEND_EXAMPLE = {
  to: 'Ada Lovelace <ada@example.com>',
  from: 'Acme <hello@example.com>',
  subject: 'Welcome, {{name ?? "friend"}}',
  body: '<p>Thanks for signing up, {{name ?? "friend"}}.</p>',
  data: { name: 'Ada' },
  tags: { kind: 'welcome' },
};

export const SendBatchBody = z.object({
  messages: z
    .array(SendBody)
    .min(1)
    .max(100)
    .describe('Up to 100 messages, each its own `/v1/send` body; all are checked before any is sent'),
});

export const SendBatchResult = z.object({
  results: z.array(SendResult).describe("One per message, in the request's order"),
  timestamp: Timestamp,
});

export const RequeueResult = z
  .object({
    requeued: z.number().int().describe('FAILED messages queued again, each with a full lifetime and no attempt used'),
    refused: z
      .object({
        suppressed: z.number().int().describe('Left FAILED: the address is suppressed'),
        unsubscribed: z
          .number()
          .int()
          .describe('Left FAILED: MARKETING (or HEADLESS campaign) mail to an unsubscribed contact'),
      })
      .describe('Refused as sending refuses them'),
  })
  .describe('What a requeue of FAILED messages did');

export const emailsContract = c.router(
  {
    requeueFailed: {
      method: 'POST',
      path: '/emails/requeue-failed',
      summary: "Queue the project's FAILED messages again (after a relay outage, say)",
      description:
        'Suppressed addresses and MARKETING mail to unsubscribed contacts are refused as sending refuses them and stay FAILED; so does mail of cancelled campaigns.',
      metadata: meta({ auth: 'secret' }),
      body: c.noBody(),
      responses: { 200: success(RequeueResult).extend({ message: z.string() }), ...commonErrors },
    },
    send: {
      method: 'POST',
      path: '/v1/send',
      summary: 'Send a transactional email now (one or more recipients)',
      description:
        'Each recipient gets its own contact upsert and rendered email. Content is a template, or subject and body. The sender domain must be verified.',
      metadata: meta({ auth: 'secret', example: SEND_EXAMPLE }),
      headers: IdempotencyHeaders,
      body: SendBody,
      responses: {
        200: success(SendResult),
        403: ErrorEnvelope,
        404: ErrorEnvelope,
        409: ErrorEnvelope,
        ...commonErrors,
      },
    },
    sendBatch: {
      method: 'POST',
      path: '/v1/send/batch',
      summary: 'Send up to 100 different transactional emails in one request (all or nothing)',
      description:
        'Every message is checked (fields, template, sender domain, strict warnings) before any is stored: one bad message answers 422 with its errors under `messages.<index>.` and nothing is sent. Then all are queued in one transaction, with one Idempotency-Key for the whole batch; `results[i]` answers `messages[i]`.',
      metadata: meta({
        auth: 'secret',
        example: {
          messages: [
            SEND_EXAMPLE,
            { to: 'grace@example.com', from: 'hello@example.com', subject: 'Your code', body: '<p>1234</p>' },
          ],
        },
      }),
      headers: IdempotencyHeaders,
      body: SendBatchBody,
      responses: {
        200: success(SendBatchResult),
        403: ErrorEnvelope,
        404: ErrorEnvelope,
        409: ErrorEnvelope,
        ...commonErrors,
      },
    },
  },
  { strictStatusCodes: true },
);

export const sendingSchemas = { Domain, DnsRecord, Template, SendResult, SendBatchResult, RequeueResult };
