import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { BareError, commonErrors, ErrorEnvelope, OffsetQuery, offsetPage, success, Timestamp } from '../common.js';
import { meta } from '../meta.js';
import { ContactData } from './contacts.js';
import { SuppressionReason } from './deliverability.js';
import { IdempotencyHeaders } from './events.js';

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

const fallback = <T extends string>(allowed: readonly T[], otherwise: T) =>
  z
    .string()
    .optional()
    .transform((v): T => (allowed.includes(v as T) ? (v as T) : otherwise));

export const TemplateListQuery = OffsetQuery.extend({
  type: ContentType.optional(),
  search: z.string().max(200).optional().describe('Case-insensitive, on name, description and subject'),
  sort: fallback(['name', 'createdAt', 'updatedAt'] as const, 'createdAt'),
  dir: fallback(['asc', 'desc'] as const, 'desc'),
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

const Address = z.string().trim().toLowerCase().email().max(254);
const NamedAddress = z.object({ name: z.string().max(200).optional(), email: Address });
export const Recipient = z.union([Address, NamedAddress]);
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

export const SendBody = z.object({
  to: z.union([Recipient, z.array(Recipient).min(1).max(100)]).describe('Recipient(s), processed one by one'),
  subject: Subject.optional(),
  body: z.string().min(1).max(20_000_000).optional(),
  template: z.string().uuid().optional(),
  from: z.union([Address, NamedAddress]).optional(),
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
  reply: Address.optional(),
  type: BodyFormat.optional().describe(
    'How `body` is written: `html` (default) or `markdown`, rendered to HTML with raw HTML in it escaped',
  ),
  attachments: z.array(Attachment).max(10).optional(),
  tracking: z
    .boolean()
    .optional()
    .describe("Open and click tracking for this send; omitted follows the project's trackingMode"),
});

export const SendResult = z.object({
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
      metadata: meta({ auth: 'secret' }),
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
  },
  { strictStatusCodes: true },
);

export const sendingSchemas = { Domain, DnsRecord, Template, SendResult, RequeueResult };
