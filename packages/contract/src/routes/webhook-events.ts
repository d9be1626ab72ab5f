import { z } from 'zod';
import { Timestamp } from '../common.js';
import { InboundAddress, InboundAttachment, InboundAuth, InboundReplyLink } from './inbound-routes.js';

/**
 * The payloads Pigeon POSTs to webhook endpoints (Standard Webhooks: `{ type, timestamp, data }`),
 * one schema per event type. `WebhookEvent` is their union; the SDK's `webhooks.verify` returns it.
 */

/** The event types with a fixed name. Segment events (`segment.<slug>.entry/exit`) and custom events have their own schemas. */
export const WebhookEventTypeName = z.enum([
  'email.sent',
  'email.delivery',
  'email.open',
  'email.click',
  'email.bounce',
  'email.complaint',
  'email.received',
  'contact.subscribed',
  'contact.unsubscribed',
  'contact.topic.subscribed',
  'contact.topic.unsubscribed',
  'webhook.test',
]);
export type WebhookEventTypeName = z.infer<typeof WebhookEventTypeName>;

const ContactRef = z.object({ id: z.string().uuid(), email: z.string() });

const EmailEventData = z.object({
  emailId: z.string().uuid().describe('The email id `POST /v1/send` answered; `GET /emails/:id` tells its story'),
  contact: ContactRef,
  to: z.string(),
  from: z.string(),
  subject: z.string(),
  templateId: z.string().uuid().nullable(),
  campaignId: z.string().uuid().nullable(),
  workflowExecutionId: z.string().uuid().nullable(),
});

const envelope = <T extends string, D extends z.ZodTypeAny>(type: T, data: D, description: string) =>
  z
    .object({
      type: z.literal(type),
      timestamp: Timestamp.describe('When the event happened'),
      data,
    })
    .describe(description);

const emailSentEvent = envelope(
  'email.sent',
  EmailEventData,
  'The email was handed to the transport (accepted by the relay, or written to the outbox)',
);
const emailDeliveryEvent = envelope(
  'email.delivery',
  EmailEventData,
  "The receiving server accepted the email (SMTP's final 250, or the provider's delivery notice)",
);
const emailOpenEvent = envelope('email.open', EmailEventData, 'The open pixel was loaded (bursts folded)');
const emailClickEvent = envelope(
  'email.click',
  EmailEventData.extend({ link: z.string().describe('The URL that was followed') }),
  'A tracked link was followed (bursts folded)',
);
const emailBounceEvent = envelope(
  'email.bounce',
  EmailEventData.extend({
    bounceType: z.enum(['hard', 'soft']),
    reason: z.string().nullable().describe("The receiving server's diagnostic"),
  }),
  'The email bounced; a hard bounce also suppresses the address',
);
const emailComplaintEvent = envelope(
  'email.complaint',
  EmailEventData.extend({ feedbackType: z.string().nullable() }),
  'The recipient marked the email as spam; the address is suppressed',
);

const emailReceivedEvent = envelope(
  'email.received',
  z.object({
    inboundEmailId: z.string().uuid().describe('`GET /inbound-emails/:id` shows the message again'),
    routeId: z.string().uuid(),
    contact: ContactRef.describe('The sender as a contact (created, unsubscribed, when the project had none)'),
    messageId: z.string().nullable(),
    from: InboundAddress,
    to: z.array(z.string()).describe('The envelope recipients the route took'),
    cc: z.array(z.string()),
    subject: z.string(),
    text: z.string().nullable().describe('Null once the content retention removed it'),
    html: z.string().nullable(),
    headers: z.array(z.object({ name: z.string(), value: z.string() })),
    auth: InboundAuth.describe('SPF, DKIM and DMARC of the arriving message, checked by Pigeon'),
    attachments: z.array(InboundAttachment),
    inReplyTo: InboundReplyLink.nullable().describe(
      'The email Pigeon sent that this message answers, and the contact it went to (then also `contact`)',
    ),
  }),
  'A message arrived for an inbound route whose action is WEBHOOK',
);

const SubscriptionData = z.object({
  contact: ContactRef.extend({ subscribed: z.boolean() }),
  reason: z.string().nullable().describe('Why, when Pigeon changed it (e.g. `hard_bounce`, `complaint`)'),
});
const contactSubscribedEvent = envelope('contact.subscribed', SubscriptionData, 'A contact became subscribed');
const contactUnsubscribedEvent = envelope('contact.unsubscribed', SubscriptionData, 'A contact became unsubscribed');

const TopicSubscriptionData = z.object({
  contact: ContactRef,
  topic: z.object({ id: z.string().uuid(), name: z.string() }),
  subscribed: z.boolean().describe("The contact's new state for the topic"),
  source: z
    .string()
    .nullable()
    .describe('Where the change came from: `api`, `link` (the preference page), `one_click` (List-Unsubscribe)'),
});
const contactTopicSubscribedEvent = envelope(
  'contact.topic.subscribed',
  TopicSubscriptionData,
  "A contact became subscribed to a topic (their choice, or the API's)",
);
const contactTopicUnsubscribedEvent = envelope(
  'contact.topic.unsubscribed',
  TopicSubscriptionData,
  "A contact left a topic (their choice, a topic mail's one-click unsubscribe, or the API's)",
);

const segmentMembershipEvent = z
  .object({
    type: z
      .string()
      .regex(/^segment\.[^.]+\.(entry|exit)$/)
      .describe('`segment.<slug>.entry` or `segment.<slug>.exit`'),
    timestamp: Timestamp,
    data: z.object({
      contact: ContactRef,
      segment: z.object({ id: z.string().uuid(), name: z.string(), slug: z.string() }),
    }),
  })
  .describe('A contact entered or left a segment that tracks membership');

const customEvent = z
  .object({
    type: z.string().describe('The event name given to `POST /v1/track`'),
    timestamp: Timestamp,
    data: z.object({
      contact: ContactRef,
      data: z.record(z.unknown()).describe('The event data as tracked'),
    }),
  })
  .describe('An event tracked by your application (`POST /v1/track`)');

const webhookTestEvent = envelope(
  'webhook.test',
  z.object({ endpointId: z.string().uuid(), message: z.string() }),
  'Sent by `POST /webhook-endpoints/:id/test`; every endpoint receives it whatever its filters',
);

// Each payload type is an interface, so declaration files name it wherever it is used (the SDK's
// declarations would otherwise spell every payload out in every route that returns one).
export interface EmailSentEventPayload extends z.infer<typeof emailSentEvent> {}
export const EmailSentEvent: z.ZodType<EmailSentEventPayload> = emailSentEvent;
export interface EmailDeliveryEventPayload extends z.infer<typeof emailDeliveryEvent> {}
export const EmailDeliveryEvent: z.ZodType<EmailDeliveryEventPayload> = emailDeliveryEvent;
export interface EmailOpenEventPayload extends z.infer<typeof emailOpenEvent> {}
export const EmailOpenEvent: z.ZodType<EmailOpenEventPayload> = emailOpenEvent;
export interface EmailClickEventPayload extends z.infer<typeof emailClickEvent> {}
export const EmailClickEvent: z.ZodType<EmailClickEventPayload> = emailClickEvent;
export interface EmailBounceEventPayload extends z.infer<typeof emailBounceEvent> {}
export const EmailBounceEvent: z.ZodType<EmailBounceEventPayload> = emailBounceEvent;
export interface EmailComplaintEventPayload extends z.infer<typeof emailComplaintEvent> {}
export const EmailComplaintEvent: z.ZodType<EmailComplaintEventPayload> = emailComplaintEvent;
export interface EmailReceivedEventPayload extends z.infer<typeof emailReceivedEvent> {}
export const EmailReceivedEvent: z.ZodType<EmailReceivedEventPayload> = emailReceivedEvent;
export interface ContactSubscribedEventPayload extends z.infer<typeof contactSubscribedEvent> {}
export const ContactSubscribedEvent: z.ZodType<ContactSubscribedEventPayload> = contactSubscribedEvent;
export interface ContactUnsubscribedEventPayload extends z.infer<typeof contactUnsubscribedEvent> {}
export const ContactUnsubscribedEvent: z.ZodType<ContactUnsubscribedEventPayload> = contactUnsubscribedEvent;
export interface ContactTopicSubscribedEventPayload extends z.infer<typeof contactTopicSubscribedEvent> {}
export const ContactTopicSubscribedEvent: z.ZodType<ContactTopicSubscribedEventPayload> = contactTopicSubscribedEvent;
export interface ContactTopicUnsubscribedEventPayload extends z.infer<typeof contactTopicUnsubscribedEvent> {}
export const ContactTopicUnsubscribedEvent: z.ZodType<ContactTopicUnsubscribedEventPayload> =
  contactTopicUnsubscribedEvent;
/** Its `type` as a template (the schema's pattern), so a union narrowed on `type` tells it from the fixed names. */
export interface SegmentMembershipEventPayload extends Omit<z.infer<typeof segmentMembershipEvent>, 'type'> {
  type: `segment.${string}.entry` | `segment.${string}.exit`;
}
export const SegmentMembershipEvent = segmentMembershipEvent as z.ZodType<SegmentMembershipEventPayload>;
export interface CustomEventPayload extends z.infer<typeof customEvent> {}
export const CustomEvent: z.ZodType<CustomEventPayload> = customEvent;
export interface WebhookTestEventPayload extends z.infer<typeof webhookTestEvent> {}
export const WebhookTestEvent: z.ZodType<WebhookTestEventPayload> = webhookTestEvent;

/**
 * Every payload. Fixed types come first: a parser (and `webhooks.verify`) reads `email.click` as
 * `EmailClickEvent`, and any other name as a segment or custom event.
 */
const webhookEventUnion = z.union([
  EmailSentEvent,
  EmailDeliveryEvent,
  EmailOpenEvent,
  EmailClickEvent,
  EmailBounceEvent,
  EmailComplaintEvent,
  EmailReceivedEvent,
  ContactSubscribedEvent,
  ContactUnsubscribedEvent,
  ContactTopicSubscribedEvent,
  ContactTopicUnsubscribedEvent,
  WebhookTestEvent,
  SegmentMembershipEvent,
  CustomEvent,
]);
export type WebhookEventPayload =
  | EmailSentEventPayload
  | EmailDeliveryEventPayload
  | EmailOpenEventPayload
  | EmailClickEventPayload
  | EmailBounceEventPayload
  | EmailComplaintEventPayload
  | EmailReceivedEventPayload
  | ContactSubscribedEventPayload
  | ContactUnsubscribedEventPayload
  | ContactTopicSubscribedEventPayload
  | ContactTopicUnsubscribedEventPayload
  | WebhookTestEventPayload
  | SegmentMembershipEventPayload
  | CustomEventPayload;
/**
 * Typed by its alias, so declaration files name `WebhookEventPayload` instead of spelling out every
 * payload where it is used. (The SDK's `WebhookEvent` is the same union, narrowable on `type`.)
 */
export const WebhookEvent: z.ZodType<WebhookEventPayload> = webhookEventUnion;

const emailExample = {
  emailId: '0193a5f2-7c1e-7d3a-9b1f-2f6c1e8a9d40',
  contact: { id: '0193a5f2-7b00-7c11-8a2e-5d1f0c3b7e21', email: 'ada@example.com' },
  to: 'ada@example.com',
  from: 'hello@yourapp.com',
  subject: 'Welcome to YourApp',
  templateId: null,
  campaignId: null,
  workflowExecutionId: null,
};
const at = '2026-11-25T20:15:03.120Z';
const contactExample = emailExample.contact;

/** One example per payload schema (OpenAPI `components.schemas.*.examples`). */
export const WEBHOOK_EVENT_EXAMPLES: Record<string, unknown> = {
  EmailSentEvent: { type: 'email.sent', timestamp: at, data: emailExample },
  EmailDeliveryEvent: { type: 'email.delivery', timestamp: at, data: emailExample },
  EmailOpenEvent: { type: 'email.open', timestamp: at, data: emailExample },
  EmailClickEvent: {
    type: 'email.click',
    timestamp: at,
    data: { ...emailExample, link: 'https://yourapp.com/start' },
  },
  EmailBounceEvent: {
    type: 'email.bounce',
    timestamp: at,
    data: { ...emailExample, bounceType: 'hard', reason: '550 5.1.1 user unknown' },
  },
  EmailComplaintEvent: { type: 'email.complaint', timestamp: at, data: { ...emailExample, feedbackType: 'abuse' } },
  EmailReceivedEvent: {
    type: 'email.received',
    timestamp: at,
    data: {
      inboundEmailId: '0193a5f2-7f00-7a44-9e5b-8a4c3f6e0b54',
      routeId: '0193a5f2-7f10-7b55-8f6c-9b5d4a7f1c65',
      contact: contactExample,
      messageId: '<CAF=x1@mail.example.com>',
      from: { email: 'ada@example.com', name: 'Ada' },
      to: ['support@yourapp.com'],
      cc: [],
      subject: 'Re: Welcome to YourApp',
      text: 'Thanks! One question…',
      html: null,
      headers: [{ name: 'Subject', value: 'Re: Welcome to YourApp' }],
      auth: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
      attachments: [
        {
          filename: 'invoice.pdf',
          contentType: 'application/pdf',
          size: 48213,
          url: 'https://pigeon.yourapp.com/inbound/attachments/eyJpIjoi…',
        },
      ],
      inReplyTo: { emailId: emailExample.emailId, contactId: contactExample.id, by: 'header' },
    },
  },
  ContactSubscribedEvent: {
    type: 'contact.subscribed',
    timestamp: at,
    data: { contact: { ...contactExample, subscribed: true }, reason: null },
  },
  ContactUnsubscribedEvent: {
    type: 'contact.unsubscribed',
    timestamp: at,
    data: { contact: { ...contactExample, subscribed: false }, reason: 'hard_bounce' },
  },
  ContactTopicSubscribedEvent: {
    type: 'contact.topic.subscribed',
    timestamp: at,
    data: {
      contact: contactExample,
      topic: { id: '0193a5f2-7e80-7a11-8b2c-3d4e5f6a7b8c', name: 'Product news' },
      subscribed: true,
      source: 'link',
    },
  },
  ContactTopicUnsubscribedEvent: {
    type: 'contact.topic.unsubscribed',
    timestamp: at,
    data: {
      contact: contactExample,
      topic: { id: '0193a5f2-7e80-7a11-8b2c-3d4e5f6a7b8c', name: 'Product news' },
      subscribed: false,
      source: 'one_click',
    },
  },
  SegmentMembershipEvent: {
    type: 'segment.trial-users.entry',
    timestamp: at,
    data: {
      contact: contactExample,
      segment: { id: '0193a5f2-7d00-7e22-9c3f-6e2a1d4c8f32', name: 'Trial users', slug: 'trial-users' },
    },
  },
  CustomEvent: { type: 'order.created', timestamp: at, data: { contact: contactExample, data: { total: 42 } } },
  WebhookTestEvent: {
    type: 'webhook.test',
    timestamp: at,
    data: { endpointId: '0193a5f2-7e00-7f33-8d4a-7f3b2e5d9a43', message: 'A test event from Pigeon' },
  },
};

export const webhookEventSchemas = {
  EmailSentEvent,
  EmailDeliveryEvent,
  EmailOpenEvent,
  EmailClickEvent,
  EmailBounceEvent,
  EmailComplaintEvent,
  EmailReceivedEvent,
  ContactSubscribedEvent,
  ContactUnsubscribedEvent,
  ContactTopicSubscribedEvent,
  ContactTopicUnsubscribedEvent,
  SegmentMembershipEvent,
  CustomEvent,
  WebhookTestEvent,
  WebhookEvent,
};

const RESERVED_PREFIXES = ['email', 'contact', 'webhook'];
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

/**
 * Why an endpoint's event-type filter is refused, or null. Accepted: `*` (everything), a fixed
 * type, `email.*` / `contact.*` / `contact.topic.*` / `segment.*`, `segment.<slug>.entry|exit|*`, a custom event name,
 * or a custom prefix such as `order.*` (`order.created`, `order.paid.late`…).
 */
export function eventTypeFilterProblem(filter: string): string | null {
  if (filter === '*') return null;
  if (filter.length > 200 || CONTROL.test(filter) || filter.trim() !== filter || filter === '') {
    return 'must be an event name or a prefix pattern such as order.*';
  }
  const lower = filter.toLowerCase();
  const prefix = lower.endsWith('.*') ? lower.slice(0, -2) : null;
  if ((prefix ?? lower).includes('*')) return 'only a trailing .* is a pattern (e.g. order.*)';
  if (prefix !== null && [...RESERVED_PREFIXES, 'segment'].includes(prefix)) return null;
  // A narrower prefix of fixed types, such as contact.topic.*
  if (prefix !== null && WebhookEventTypeName.options.some((t) => t.startsWith(`${prefix}.`))) return null;
  const head = (prefix ?? lower).split('.')[0] as string;
  if (RESERVED_PREFIXES.includes(head)) {
    if (prefix === null && (WebhookEventTypeName.options as string[]).includes(lower) && lower !== 'webhook.test') {
      return lower === filter ? null : 'event types are lower-case';
    }
    return `unknown event type; the ${head}.* types are ${WebhookEventTypeName.options.filter((t) => t.startsWith(`${head}.`) && t !== 'webhook.test').join(', ') || 'sent to every endpoint'}`;
  }
  if (head === 'segment') {
    if (prefix !== null)
      return /^segment\.[^.]+$/.test(prefix) ? null : 'segment patterns are segment.* or segment.<slug>.*';
    return /^segment\.[^.]+\.(entry|exit)$/.test(lower) ? null : 'segment events are segment.<slug>.entry or .exit';
  }
  return null;
}

export const EventTypeFilter = z
  .string()
  .superRefine((value, ctx) => {
    const problem = eventTypeFilterProblem(value);
    if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
  })
  .describe(
    'An event type (`email.click`), `segment.<slug>.entry`, a custom event name, a prefix such as `order.*`, or `*`',
  );
