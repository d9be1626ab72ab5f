import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, success, Timestamp } from '../common.js';
import { meta } from '../meta.js';
import { ContactData } from './contacts.js';
import { domainSchemas } from './domains.js';
import { IdempotencyHeaders } from './events.js';
import { Mailbox, Mailboxes, SendWarning, sendOptionFields } from './send-options.js';
import { SuppressionReason } from './suppressions.js';
import { Subject, templateSchemas } from './templates.js';

const c = initContract();

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

const requeueAnswerObject = success(RequeueResult).extend({ message: z.string() });
type RequeueAnswerObject = typeof requeueAnswerObject;
/** The answer of both requeue routes, under a name of its own (declarations refer to it). */
export interface RequeueAnswerSchema extends RequeueAnswerObject {}
export const RequeueAnswer: RequeueAnswerSchema = requeueAnswerObject;

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
      responses: { 200: RequeueAnswer, ...commonErrors },
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

export const sendingSchemas = { ...domainSchemas, ...templateSchemas, SendResult, SendBatchResult, RequeueResult };
