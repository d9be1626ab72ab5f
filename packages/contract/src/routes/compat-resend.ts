import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { meta } from '../meta.js';
import { ContactData, ContactEmail } from './contacts.js';

/**
 * Resend's wire format under `/resend` (a compatibility layer, not Pigeon's API: it is left out of
 * the SDK and the OpenAPI documents; `docs/coming-from-resend.md` describes it). Bodies are strict:
 * a field Pigeon does not carry out is refused with 422 rather than dropped.
 */
const c = initContract();

/** Resend's error body. */
export const ResendError = z.object({
  statusCode: z.number().int(),
  message: z.string(),
  name: z.string().describe("Resend's error name: `validation_error`, `not_found`, `missing_api_key` …"),
});
export type ResendError = z.infer<typeof ResendError>;

const Addresses = z.union([z.string(), z.array(z.string()).min(1).max(50)], {
  errorMap: (_issue, ctx) => ({
    message: ctx.data === undefined ? 'Required' : 'must be an address or a list of at most 50 addresses',
  }),
});

export const ResendTag = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,256}$/, 'only ASCII letters, numbers, underscores or dashes'),
    value: z.string().max(256),
  })
  .strict();

export const ResendAttachment = z
  .object({
    content: z.string().optional().describe('Base64-encoded bytes'),
    filename: z.string().optional(),
    path: z.string().optional().describe('Refused: Pigeon does not fetch attachments from URLs'),
    content_type: z.string().optional(),
    content_id: z.string().optional().describe('Refused: inline attachments are not supported'),
  })
  .strict();

const emailFields = {
  from: z.string(),
  to: Addresses,
  subject: z.string(),
  cc: Addresses.optional(),
  bcc: Addresses.optional(),
  reply_to: Addresses.optional(),
  html: z.string().optional(),
  text: z.string().optional(),
  tags: z.array(ResendTag).max(10).optional(),
  headers: z.record(z.string()).optional(),
};

export const ResendSendBody = z
  .object({
    ...emailFields,
    scheduled_at: z.string().optional().describe('An ISO 8601 date-time, at most 30 days ahead'),
    attachments: z.array(ResendAttachment).max(10).optional(),
  })
  .strict();
export type ResendSendBody = z.infer<typeof ResendSendBody>;

/** Resend's batch takes neither attachments nor `scheduled_at`. */
export const ResendBatchBody = z.array(z.object(emailFields).strict()).min(1).max(100);

const Id = z.object({ id: z.string() });

export const ResendEmail = z.object({
  object: z.literal('email'),
  id: z.string(),
  to: z.array(z.string()),
  from: z.string(),
  created_at: z.string(),
  subject: z.string(),
  html: z.string().nullable(),
  text: z.string().nullable(),
  cc: z.array(z.string()).nullable(),
  bcc: z.array(z.string()).nullable(),
  reply_to: z.array(z.string()).nullable(),
  last_event: z.string(),
  scheduled_at: z.string().nullable(),
  tags: z.array(z.object({ name: z.string(), value: z.string() })),
});

export const ResendDomainRecord = z.object({
  record: z.string(),
  name: z.string(),
  type: z.string(),
  ttl: z.string(),
  status: z.string(),
  value: z.string(),
});

const domainFields = {
  id: z.string(),
  name: z.string(),
  status: z.enum(['verified', 'pending']),
  created_at: z.string(),
  region: z.string(),
};
export const ResendDomain = z.object({
  object: z.literal('domain'),
  ...domainFields,
  records: z.array(ResendDomainRecord),
});

/** An audience (and a segment, Resend's newer name for one): the project's contacts. */
export const ResendAudience = z.object({
  object: z.enum(['audience', 'segment']),
  id: z.string(),
  name: z.string(),
  created_at: z.string(),
});
const AudienceListItem = ResendAudience.omit({ object: true });

export const ResendContact = z.object({
  object: z.literal('contact'),
  id: z.string(),
  email: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  created_at: z.string(),
  unsubscribed: z.boolean(),
  properties: z.record(z.unknown()),
});

const contactFields = {
  first_name: z.string().max(200).nullable().optional(),
  last_name: z.string().max(200).nullable().optional(),
  unsubscribed: z.boolean().optional(),
  properties: ContactData.optional(),
};
export const ResendCreateContactBody = z.object({ email: ContactEmail, ...contactFields }).strict();
export const ResendUpdateContactBody = z.object(contactFields).strict();
export type ResendCreateContactBody = z.infer<typeof ResendCreateContactBody>;
export type ResendUpdateContactBody = z.infer<typeof ResendUpdateContactBody>;

const list = <T extends z.ZodTypeAny>(item: T) =>
  z.object({ object: z.literal('list'), has_more: z.boolean(), data: z.array(item) });
const ListQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(100) }).strict();
const Emailed = z.object({ object: z.literal('email'), id: z.string() });
const ContactRefParams = z.object({ id: z.string().min(1).max(254) });
const AudienceContactParams = z.object({ audienceId: z.string(), id: z.string().min(1).max(254) });
const AudienceParams = z.object({ audienceId: z.string() });
const ContactDeleted = z.object({ object: z.literal('contact'), contact: z.string(), deleted: z.literal(true) });

const errors = {
  400: ResendError,
  401: ResendError,
  403: ResendError,
  404: ResendError,
  409: ResendError,
  422: ResendError,
  429: ResendError,
};
const auth = meta({ auth: 'secret' });

/** A contact's routes, under `/resend/contacts` and `/resend/audiences/:audienceId/contacts`. */
const contactRoutes = <P extends string>(prefix: P, withAudience: boolean) => {
  const one = withAudience ? AudienceContactParams : ContactRefParams;
  const all = withAudience ? AudienceParams : z.object({});
  return {
    create: {
      method: 'POST',
      path: `${prefix}`,
      metadata: auth,
      pathParams: all,
      body: ResendCreateContactBody,
      responses: { 201: z.object({ object: z.literal('contact'), id: z.string() }), ...errors },
    },
    list: {
      method: 'GET',
      path: `${prefix}`,
      metadata: auth,
      pathParams: all,
      query: ListQuery,
      responses: { 200: list(ResendContact.omit({ object: true })), ...errors },
    },
    get: {
      method: 'GET',
      path: `${prefix}/:id`,
      metadata: auth,
      pathParams: one,
      responses: { 200: ResendContact, ...errors },
    },
    update: {
      method: 'PATCH',
      path: `${prefix}/:id`,
      metadata: auth,
      pathParams: one,
      body: ResendUpdateContactBody,
      responses: { 200: z.object({ object: z.literal('contact'), id: z.string() }), ...errors },
    },
    remove: {
      method: 'DELETE',
      path: `${prefix}/:id`,
      metadata: auth,
      pathParams: one,
      body: c.noBody(),
      responses: { 200: ContactDeleted, ...errors },
    },
  } as const;
};

export const resendContract = c.router(
  {
    emails: {
      // `batch` before `:id`, so that it is not taken for an id.
      batch: {
        method: 'POST',
        path: '/resend/emails/batch',
        metadata: auth,
        body: ResendBatchBody,
        responses: { 200: z.object({ data: z.array(Id) }), ...errors },
      },
      send: {
        method: 'POST',
        path: '/resend/emails',
        metadata: auth,
        body: ResendSendBody,
        responses: { 200: Id, ...errors },
      },
      get: {
        method: 'GET',
        path: '/resend/emails/:id',
        metadata: auth,
        pathParams: Id,
        responses: { 200: ResendEmail, ...errors },
      },
      update: {
        method: 'PATCH',
        path: '/resend/emails/:id',
        metadata: auth,
        pathParams: Id,
        body: z.object({ scheduled_at: z.string() }).strict(),
        responses: { 200: Emailed, ...errors },
      },
      cancel: {
        method: 'POST',
        path: '/resend/emails/:id/cancel',
        metadata: auth,
        pathParams: Id,
        body: c.noBody(),
        responses: { 200: Emailed, ...errors },
      },
    },
    domains: {
      list: {
        method: 'GET',
        path: '/resend/domains',
        metadata: auth,
        responses: { 200: list(z.object(domainFields)), ...errors },
      },
      get: {
        method: 'GET',
        path: '/resend/domains/:id',
        metadata: auth,
        pathParams: Id,
        responses: { 200: ResendDomain, ...errors },
      },
    },
    audiences: {
      list: {
        method: 'GET',
        path: '/resend/audiences',
        metadata: auth,
        responses: { 200: list(AudienceListItem), ...errors },
      },
      get: {
        method: 'GET',
        path: '/resend/audiences/:id',
        metadata: auth,
        pathParams: Id,
        responses: { 200: ResendAudience, ...errors },
      },
      // Resend's SDK 6 calls audiences segments (`resend.audiences` is `resend.segments`).
      listSegments: {
        method: 'GET',
        path: '/resend/segments',
        metadata: auth,
        responses: { 200: list(AudienceListItem), ...errors },
      },
      getSegment: {
        method: 'GET',
        path: '/resend/segments/:id',
        metadata: auth,
        pathParams: Id,
        responses: { 200: ResendAudience, ...errors },
      },
      segmentContacts: {
        method: 'GET',
        path: '/resend/segments/:audienceId/contacts',
        metadata: auth,
        pathParams: AudienceParams,
        query: ListQuery,
        responses: { 200: list(ResendContact.omit({ object: true })), ...errors },
      },
    },
    contacts: contactRoutes('/resend/contacts', false),
    audienceContacts: contactRoutes('/resend/audiences/:audienceId/contacts', true),
  },
  { strictStatusCodes: true },
);
