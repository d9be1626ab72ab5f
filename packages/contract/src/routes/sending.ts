import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, success, Timestamp } from '../common.js';
import { meta } from '../meta.js';
import { ContactData } from './contacts.js';
import { domainSchemas } from './domains.js';
import { IdempotencyHeaders } from './events.js';
import { SuppressionReason } from './suppressions.js';
import { Subject, templateSchemas } from './templates.js';

const c = initContract();

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

export const emailsContract = c.router(
  {
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

export const sendingSchemas = { ...domainSchemas, ...templateSchemas, SendResult };
