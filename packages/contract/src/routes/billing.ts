import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, Timestamp } from '../common.js';
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

// Each schema that routes repeat has a named interface, so the SDK's declaration files refer to it
// instead of spelling it out per route (see ErrorEnvelopeSchema).
const billingLimits = z.object({
  transactional: Cap,
  campaigns: Cap,
  workflows: Cap,
});
type BillingLimitsObject = typeof billingLimits;
export interface BillingLimitsSchema extends BillingLimitsObject {}
export const BillingLimits: BillingLimitsSchema = billingLimits;

const billingLimitsUpdate = billingLimits
  .partial()
  .refine((b) => Object.keys(b).length > 0, 'give at least one category: transactional, campaigns or workflows');
type BillingLimitsUpdateObject = typeof billingLimitsUpdate;
export interface BillingLimitsUpdateSchema extends BillingLimitsUpdateObject {}
export const BillingLimitsUpdate: BillingLimitsUpdateSchema = billingLimitsUpdate;

const categoryUsage = z.object({
  used: z.number().int().describe('Emails queued this month in the category'),
  limit: z.number().int().nullable().describe('The monthly cap; null: none'),
  remaining: z.number().int().nullable().describe('limit − used (never below 0); null without a cap'),
});
type CategoryUsageObject = typeof categoryUsage;
interface CategoryUsageSchema extends CategoryUsageObject {}
const CategoryUsage: CategoryUsageSchema = categoryUsage;

const billingConsumption = z.object({
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
type BillingConsumptionObject = typeof billingConsumption;
export interface BillingConsumptionSchema extends BillingConsumptionObject {}
export const BillingConsumption: BillingConsumptionSchema = billingConsumption;

const checkoutBody = z.object({
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
type CheckoutBodyObject = typeof checkoutBody;
export interface CheckoutBodySchema extends CheckoutBodyObject {}
export const CheckoutBody: CheckoutBodySchema = checkoutBody;
const redirectSession = z.object({
  id: z.string(),
  url: z.string().url().describe('Send the browser here (Stripe)'),
});
type RedirectSessionObject = typeof redirectSession;
export interface RedirectSessionSchema extends RedirectSessionObject {}
export const RedirectSession: RedirectSessionSchema = redirectSession;

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
const invoices = z.object({ data: z.array(Invoice) });
type InvoicesObject = typeof invoices;
export interface InvoicesSchema extends InvoicesObject {}
export const Invoices: InvoicesSchema = invoices;

const projectId = z.object({ id: z.string().uuid() });
type ProjectIdObject = typeof projectId;
interface ProjectIdSchema extends ProjectIdObject {}
const ProjectId: ProjectIdSchema = projectId;
const billingErrors = { 403: ErrorEnvelope, 404: ErrorEnvelope, ...commonErrors };
const stripeErrors = { ...billingErrors, 409: ErrorEnvelope, 502: ErrorEnvelope };

export const billingContract = c.router(
  {
    getLimits: {
      method: 'GET',
      path: '/users/@me/projects/:id/billing-limits',
      summary: 'The monthly caps per category (null: no cap)',
      metadata: meta({ auth: 'project', permission: 'project.use' }),
      pathParams: ProjectId,
      responses: { 200: BillingLimits, ...billingErrors },
    },
    setLimits: {
      method: 'PUT',
      path: '/users/@me/projects/:id/billing-limits',
      summary:
        'Set monthly caps (OWNER or ADMIN); categories left out keep their cap. Mail over a cap is refused with 403 BILLING_LIMIT_EXCEEDED',
      metadata: meta({ auth: 'project', permission: 'project.manage' }),
      pathParams: ProjectId,
      body: BillingLimitsUpdate,
      responses: { 200: BillingLimits, ...billingErrors },
    },
    consumption: {
      method: 'GET',
      path: '/users/@me/projects/:id/billing-consumption',
      summary: 'Emails queued this month per category, against the caps, and when the counters reset',
      metadata: meta({ auth: 'project', permission: 'project.use' }),
      pathParams: ProjectId,
      responses: { 200: BillingConsumption, ...billingErrors },
    },
    checkout: {
      method: 'POST',
      path: '/users/@me/projects/:id/checkout',
      summary:
        'A Stripe Checkout session for the subscription (OWNER or ADMIN); 404 BILLING_DISABLED when billing is off',
      metadata: meta({ auth: 'project', permission: 'project.manage' }),
      pathParams: ProjectId,
      body: CheckoutBody,
      responses: { 200: RedirectSession, ...stripeErrors },
    },
    portal: {
      method: 'POST',
      path: '/users/@me/projects/:id/billing-portal',
      summary:
        'A Stripe billing portal session (OWNER or ADMIN); 409 before the first checkout, 404 BILLING_DISABLED when billing is off',
      metadata: meta({ auth: 'project', permission: 'project.manage' }),
      pathParams: ProjectId,
      body: c.noBody(),
      responses: { 200: RedirectSession, ...stripeErrors },
    },
    invoices: {
      method: 'GET',
      path: '/users/@me/projects/:id/billing-invoices',
      summary:
        "The project's Stripe invoices, newest first (empty before the first checkout); 404 BILLING_DISABLED when billing is off",
      metadata: meta({ auth: 'project', permission: 'project.manage' }),
      pathParams: ProjectId,
      responses: { 200: Invoices, ...stripeErrors },
    },
  },
  { strictStatusCodes: true },
);

export const billingSchemas = { BillingLimits, BillingConsumption, RedirectSession, Invoice, Invoices };
