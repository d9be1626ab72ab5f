import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, publicErrors, Timestamp } from '../common.js';
import { meta } from '../meta.js';

const c = initContract();

/** What a queued email counts against: `/v1/send` mail, campaign mail (tests too), workflow mail. */
export const BillingCategory = z.enum(['transactional', 'campaigns', 'workflows']);
export type BillingCategory = z.infer<typeof BillingCategory>;

const Cap = z
  .number()
  .int()
  .min(0)
  .max(1_000_000_000_000)
  .nullable()
  .describe('Emails per calendar month (UTC); null: no cap');

export const BillingLimits = z.object({
  transactional: Cap,
  campaigns: Cap,
  workflows: Cap,
});

export const BillingLimitsUpdate = BillingLimits.partial().refine(
  (b) => Object.keys(b).length > 0,
  'give at least one category: transactional, campaigns or workflows',
);

const CategoryUsage = z.object({
  used: z.number().int().describe('Emails queued this month in the category'),
  limit: z.number().int().nullable().describe('The monthly cap; null: none'),
  remaining: z.number().int().nullable().describe('limit − used (never below 0); null without a cap'),
});

export const BillingConsumption = z.object({
  periodStart: Timestamp.describe('First instant of the current month (UTC)'),
  resetsAt: Timestamp.describe('When the counters start again from 0: the first instant of next month (UTC)'),
  transactional: CategoryUsage,
  campaigns: CategoryUsage,
  workflows: CategoryUsage,
  subscription: z
    .object({ status: z.string(), currentPeriodEnd: Timestamp.nullable() })
    .nullable()
    .describe('The Stripe subscription of the project, when billing is on and there is one'),
});

export const CheckoutBody = z.object({
  successUrl: z
    .string()
    .url()
    .max(2000)
    .regex(/^https?:\/\//i, 'must be an http(s) URL')
    .optional(),
  cancelUrl: z
    .string()
    .url()
    .max(2000)
    .regex(/^https?:\/\//i, 'must be an http(s) URL')
    .optional(),
});
export const RedirectSession = z.object({
  id: z.string(),
  url: z.string().url().describe('Send the browser here (Stripe)'),
});

export const Invoice = z.object({
  id: z.string(),
  number: z.string().nullable(),
  status: z.string().nullable().describe('draft, open, paid, uncollectible or void'),
  currency: z.string(),
  amountDue: z.number().int().describe('In the smallest unit of the currency'),
  amountPaid: z.number().int(),
  createdAt: Timestamp,
  hostedInvoiceUrl: z.string().nullable(),
  pdfUrl: z.string().nullable(),
});
export const Invoices = z.object({ data: z.array(Invoice) });

export const WebhookReceived = z.object({
  received: z.literal(true),
  type: z.string().describe('The kind of message that was processed'),
});

const ProjectId = z.object({ id: z.string().uuid() });
const billingErrors = { 403: ErrorEnvelope, 404: ErrorEnvelope, ...commonErrors };
const stripeErrors = { ...billingErrors, 409: ErrorEnvelope, 501: ErrorEnvelope, 502: ErrorEnvelope };

export const billingContract = c.router(
  {
    getLimits: {
      method: 'GET',
      path: '/users/@me/projects/:id/billing-limits',
      summary: 'The monthly caps per category (null: no cap)',
      metadata: meta({ auth: 'project' }),
      pathParams: ProjectId,
      responses: { 200: BillingLimits, ...billingErrors },
    },
    setLimits: {
      method: 'PUT',
      path: '/users/@me/projects/:id/billing-limits',
      summary:
        'Set monthly caps (OWNER or ADMIN); categories left out keep their cap. Mail over a cap is refused with 403 BILLING_LIMIT_EXCEEDED',
      metadata: meta({ auth: 'project' }),
      pathParams: ProjectId,
      body: BillingLimitsUpdate,
      responses: { 200: BillingLimits, ...billingErrors },
    },
    consumption: {
      method: 'GET',
      path: '/users/@me/projects/:id/billing-consumption',
      summary: 'Emails queued this month per category, against the caps, and when the counters reset',
      metadata: meta({ auth: 'project' }),
      pathParams: ProjectId,
      responses: { 200: BillingConsumption, ...billingErrors },
    },
    checkout: {
      method: 'POST',
      path: '/users/@me/projects/:id/checkout',
      summary: 'A Stripe Checkout session for the subscription (OWNER or ADMIN); 501 when billing is off',
      metadata: meta({ auth: 'project' }),
      pathParams: ProjectId,
      body: CheckoutBody,
      responses: { 200: RedirectSession, ...stripeErrors },
    },
    portal: {
      method: 'POST',
      path: '/users/@me/projects/:id/billing-portal',
      summary:
        'A Stripe billing portal session (OWNER or ADMIN); 409 before the first checkout, 501 when billing is off',
      metadata: meta({ auth: 'project' }),
      pathParams: ProjectId,
      body: c.noBody(),
      responses: { 200: RedirectSession, ...stripeErrors },
    },
    invoices: {
      method: 'GET',
      path: '/users/@me/projects/:id/billing-invoices',
      summary: "The project's Stripe invoices, newest first (empty before the first checkout); 501 when billing is off",
      metadata: meta({ auth: 'project' }),
      pathParams: ProjectId,
      responses: { 200: Invoices, ...stripeErrors },
    },
  },
  { strictStatusCodes: true },
);

export const inboundWebhooksContract = c.router(
  {
    stripe: {
      method: 'POST',
      path: '/webhooks/incoming/stripe',
      summary: 'Stripe events (signed with STRIPE_WEBHOOK_SECRET); not called by applications',
      description:
        'The `Stripe-Signature` header is checked against the raw body: a forged or stale (older than 5 minutes) payload is 400 INVALID_SIGNATURE, an event already processed is 409. 501 when billing is off.',
      metadata: meta({ auth: 'none' }),
      body: z.record(z.unknown()),
      responses: {
        200: WebhookReceived,
        409: ErrorEnvelope,
        422: ErrorEnvelope,
        501: ErrorEnvelope,
        ...publicErrors,
      },
    },
    sns: {
      method: 'POST',
      path: '/webhooks/sns',
      summary: 'Amazon SNS: SES bounce, complaint and delivery notifications, and subscription confirmations',
      description:
        'The SNS signature is verified against the signing certificate (fetched only from sns.<region>.amazonaws.com, cached). A bad signature, a certificate elsewhere or a message older than an hour is 400 INVALID_SIGNATURE.',
      metadata: meta({ auth: 'none' }),
      body: z.record(z.unknown()),
      responses: { 200: WebhookReceived, 422: ErrorEnvelope, 502: ErrorEnvelope, ...publicErrors },
    },
  },
  { strictStatusCodes: true },
);

export const billingSchemas = { BillingLimits, BillingConsumption, RedirectSession, Invoice, Invoices };
