import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  BareError,
  CursorQuery,
  commonErrors,
  cursorPage,
  ErrorEnvelope,
  knownOrDefault,
  Timestamp,
} from '../common.js';
import { meta } from '../meta.js';

const c = initContract();

/** Limits of a contact's custom data, per request and per stored contact. */
export const CONTACT_DATA_LIMITS = { keyLength: 100, keys: 200, bytes: 64 * 1024 } as const;

export const ContactData = z
  .record(z.unknown().describe('Any JSON value; see the data rules'))
  .superRefine((data, ctx) => {
    const keys = Object.keys(data);
    if (keys.length > CONTACT_DATA_LIMITS.keys) {
      ctx.addIssue({
        code: 'too_big',
        type: 'array',
        maximum: CONTACT_DATA_LIMITS.keys,
        inclusive: true,
        message: `at most ${CONTACT_DATA_LIMITS.keys} keys`,
      });
    }
    for (const key of keys.filter((k) => k.length > CONTACT_DATA_LIMITS.keyLength).slice(0, 3)) {
      ctx.addIssue({
        code: 'too_big',
        type: 'string',
        maximum: CONTACT_DATA_LIMITS.keyLength,
        inclusive: true,
        path: [key.slice(0, 40)],
        message: `keys are at most ${CONTACT_DATA_LIMITS.keyLength} characters`,
      });
    }
    if (new TextEncoder().encode(JSON.stringify(data)).length > CONTACT_DATA_LIMITS.bytes) {
      ctx.addIssue({
        code: 'too_big',
        type: 'string',
        maximum: CONTACT_DATA_LIMITS.bytes,
        inclusive: true,
        message: `at most ${CONTACT_DATA_LIMITS.bytes / 1024} KB as JSON`,
      });
    }
  })
  .describe(
    'Custom fields. Primitives are stored; null deletes a key; "" is ignored; {value, persistent:false} is used for this request only; reserved keys are dropped. At most 200 keys of at most 100 characters and 64 KB (as JSON), per request and per stored contact.',
  );

const contactObject = z.object({
  id: z.string().uuid(),
  email: z.string().email(),
  subscribed: z.boolean(),
  data: z.record(z.unknown().describe('A stored custom field value')),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
type ContactObject = typeof contactObject;
/** `Contact` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface ContactSchema extends ContactObject {}
export const Contact: ContactSchema = contactObject;

const contactWithMetaObject = Contact.extend({
  _meta: z.object({ isNew: z.boolean(), isUpdate: z.boolean() }),
});
type ContactWithMetaObject = typeof contactWithMetaObject;
/** `ContactWithMeta` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface ContactWithMetaSchema extends ContactWithMetaObject {}
export const ContactWithMeta: ContactWithMetaSchema = contactWithMetaObject;

export const ContactEmail = z.string().trim().toLowerCase().email().max(254);

const ContactId = z.object({ id: z.string().uuid() });
const FieldPath = z.object({ field: z.string().min(1).max(200) });

/** Unrecognised values fall back to the default instead of failing (spec §4). */
export const ContactListQuery = CursorQuery.extend({
  search: z.string().max(254).optional().describe('Case-insensitive substring of the email'),
  subscribed: z.enum(['true', 'false']).optional().describe('Omit for both'),
  sort: knownOrDefault(['email', 'createdAt'] as const, 'createdAt').describe('`email` or `createdAt` (default)'),
  dir: knownOrDefault(['asc', 'desc'] as const, 'desc').describe('`asc` or `desc` (default)'),
});

export const JobStatus = z.enum(['queued', 'running', 'completed', 'failed']);
export type JobStatus = z.infer<typeof JobStatus>;
export const JobKind = z.enum([
  'import',
  'bulk_subscribe',
  'bulk_unsubscribe',
  'bulk_delete',
  'delete_field',
  'delete_events',
  'recover_deliveries',
]);
export type JobKind = z.infer<typeof JobKind>;

const jobObject = z.object({
  id: z.string().uuid(),
  kind: JobKind,
  status: JobStatus,
  progress: z.number().int().min(0).max(100).describe('Percent done'),
  total: z.number().int(),
  processed: z.number().int(),
  created: z.number().int(),
  updated: z.number().int(),
  skipped: z.number().int(),
  errors: z
    .array(
      z.object({
        row: z.number().int().optional().describe('1-based CSV line number'),
        contactId: z.string().optional(),
        reason: z.string(),
      }),
    )
    .describe('At most the first 100 problems'),
  error: z.string().nullable().describe('Why a failed job failed'),
  createdAt: Timestamp,
  startedAt: Timestamp.nullable(),
  finishedAt: Timestamp.nullable(),
});
type JobObject = typeof jobObject;
/** `Job` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface JobSchema extends JobObject {}
export const Job: JobSchema = jobObject;

export const JobAccepted = z.object({ jobId: z.string().uuid() });
const ContactIds = z.object({ contactIds: z.array(z.string().uuid()).min(1).max(1000) });

export const FieldKind = z.enum(['standard', 'custom']);
export type FieldKind = z.infer<typeof FieldKind>;
export const FieldType = z.enum(['string', 'number', 'boolean', 'date', 'object', 'array', 'mixed']);
export type FieldType = z.infer<typeof FieldType>;

export const FieldInfo = z.object({
  field: z.string().describe('`email`, `subscribed`, `createdAt`, `updatedAt`, or `data.<key>`'),
  kind: FieldKind,
  type: FieldType,
  count: z.number().int().describe('Contacts that have the field'),
  coverage: z.number().describe('Percentage of contacts that have the field, 0..100'),
});

const notFound = { 404: ErrorEnvelope };
const dashboard = meta({ auth: 'dashboard', permission: 'project.use' });

export const contactsContract = c.router(
  {
    fields: {
      method: 'GET',
      path: '/contacts/fields',
      summary: 'Standard and custom fields with inferred types and coverage',
      metadata: dashboard,
      responses: {
        200: z.object({
          totalContacts: z.number().int(),
          fields: z.array(FieldInfo),
          sampled: z
            .boolean()
            .describe('True when custom fields were inferred from a random sample of contacts (large projects)'),
          sampleSize: z.number().int().describe('Contacts read to infer custom fields'),
        }),
        ...commonErrors,
      },
    },
    fieldValues: {
      method: 'GET',
      path: '/contacts/fields/:field/values',
      summary: 'Distinct values of a custom field, most common first',
      metadata: dashboard,
      pathParams: FieldPath,
      query: z.object({ limit: z.coerce.number().int().min(1).max(500).default(100) }),
      responses: {
        200: z.object({
          field: z.string(),
          values: z.array(z.object({ value: z.unknown().describe('A stored value'), count: z.number().int() })),
        }),
        ...commonErrors,
      },
    },
    fieldUsage: {
      method: 'GET',
      path: '/contacts/fields/:field/usage',
      summary: 'Where a custom field is referenced',
      metadata: dashboard,
      pathParams: FieldPath,
      responses: {
        200: z.object({
          field: z.string(),
          segments: z.array(z.object({ id: z.string(), name: z.string() })),
          campaigns: z.array(z.object({ id: z.string(), name: z.string() })),
          workflows: z.array(z.object({ id: z.string(), name: z.string() })),
          templates: z.array(z.object({ id: z.string(), name: z.string() })),
        }),
        ...commonErrors,
      },
    },
    deleteField: {
      method: 'DELETE',
      path: '/contacts/fields/:field',
      summary: 'Delete a custom field from every contact (queued; poll GET /contacts/bulk/:jobId)',
      metadata: dashboard,
      pathParams: FieldPath,
      body: c.noBody(),
      responses: { 202: JobAccepted, 400: ErrorEnvelope, ...commonErrors },
    },
    lookup: {
      method: 'POST',
      path: '/contacts/lookup',
      summary: 'Which of up to 500 emails exist as contacts',
      metadata: dashboard,
      body: z.object({ emails: z.array(ContactEmail).min(1).max(500) }),
      responses: {
        200: z.object({
          found: z.array(z.object({ email: z.string(), id: z.string().uuid() })),
          missing: z.array(z.string()),
        }),
        ...commonErrors,
      },
    },
    import: {
      method: 'POST',
      path: '/contacts/import',
      summary: 'Import contacts from a CSV file (multipart field `file`, at most 5 MB); queued',
      description:
        'Header row with `email` and any other columns (stored in `data`; numbers and booleans recognised); an optional `subscribed` column. One bad row never fails the import.',
      metadata: dashboard,
      contentType: 'multipart/form-data',
      body: z.object({ file: z.unknown().describe('The CSV file (binary)') }),
      responses: { 202: JobAccepted, 413: ErrorEnvelope, ...commonErrors },
    },
    importStatus: {
      method: 'GET',
      path: '/contacts/import/:jobId',
      summary: 'Poll an import job',
      metadata: dashboard,
      pathParams: z.object({ jobId: z.string().uuid() }),
      responses: { 200: Job, ...notFound, ...commonErrors },
    },
    bulkSubscribe: {
      method: 'POST',
      path: '/contacts/bulk-subscribe',
      summary: 'Subscribe up to 1,000 contacts (queued)',
      metadata: dashboard,
      body: ContactIds,
      responses: { 202: JobAccepted, ...commonErrors },
    },
    bulkUnsubscribe: {
      method: 'POST',
      path: '/contacts/bulk-unsubscribe',
      summary: 'Unsubscribe up to 1,000 contacts (queued)',
      metadata: dashboard,
      body: ContactIds,
      responses: { 202: JobAccepted, ...commonErrors },
    },
    bulkDelete: {
      method: 'POST',
      path: '/contacts/bulk-delete',
      summary: 'Delete up to 1,000 contacts (queued)',
      metadata: dashboard,
      body: ContactIds,
      responses: { 202: JobAccepted, ...commonErrors },
    },
    bulkStatus: {
      method: 'GET',
      path: '/contacts/bulk/:jobId',
      summary: 'Poll a bulk job',
      metadata: dashboard,
      pathParams: z.object({ jobId: z.string().uuid() }),
      responses: { 200: Job, ...notFound, ...commonErrors },
    },
    create: {
      method: 'POST',
      path: '/contacts',
      summary: 'Create or update a contact by email (upsert)',
      description: '201 when created, 200 when an existing contact was updated; both carry `_meta`.',
      metadata: meta({ auth: 'dashboard', permission: 'project.use', errorStyle: 'bare' }),
      body: z.object({ email: ContactEmail, subscribed: z.boolean().optional(), data: ContactData.optional() }),
      responses: { 201: ContactWithMeta, 200: ContactWithMeta, 400: BareError, ...commonErrors },
    },
    list: {
      method: 'GET',
      path: '/contacts',
      summary: 'List contacts (cursor pagination, search, filter, sort)',
      metadata: dashboard,
      query: ContactListQuery,
      responses: { 200: cursorPage(Contact), ...commonErrors },
    },
    get: {
      method: 'GET',
      path: '/contacts/:id',
      summary: 'Get a contact',
      metadata: dashboard,
      pathParams: ContactId,
      responses: { 200: Contact, ...notFound, ...commonErrors },
    },
    update: {
      method: 'PATCH',
      path: '/contacts/:id',
      summary: 'Update a contact',
      metadata: dashboard,
      pathParams: ContactId,
      body: z.object({
        email: ContactEmail.optional(),
        subscribed: z.boolean().optional(),
        data: ContactData.optional(),
      }),
      responses: { 200: Contact, 409: ErrorEnvelope, ...notFound, ...commonErrors },
    },
    delete: {
      method: 'DELETE',
      path: '/contacts/:id',
      summary: 'Delete a contact with its events and memberships',
      metadata: dashboard,
      pathParams: ContactId,
      body: c.noBody(),
      responses: { 204: c.noBody(), ...notFound, ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

export const contactSchemas = { Contact, ContactWithMeta, Job, JobAccepted, FieldInfo };
