import { contract } from './contract.js';
import type { RequestOptions, Transport } from './transport.js';
import type {
  BillingConsumption,
  BillingLimits,
  BillingLimitsUpdate,
  BillingRedirect,
  CheckoutBody,
  InvoiceList,
} from './types.js';

/**
 * Billing of a project, as `pigeon.billing`: monthly caps per category (transactional, campaigns,
 * workflows) and this month's consumption, and, when the server has Stripe configured, checkout,
 * the billing portal and invoices (otherwise these answer 404 `BILLING_DISABLED`). `projectId` is
 * the id of the key's own project; another project's id is 404. Mail over a cap is refused with
 * 403 `BILLING_LIMIT_EXCEEDED`, whose `details` say the category, the cap and `resetsAt`.
 */
export class Billing {
  constructor(private readonly transport: Transport) {}

  /** The monthly caps; null means no cap. */
  readonly limits = (projectId: string, options?: RequestOptions): Promise<BillingLimits> =>
    this.transport.call(contract.billing.getLimits, { params: { id: projectId } }, options);

  /** Set caps (categories left out keep theirs; null removes one). */
  readonly setLimits = (
    projectId: string,
    body: BillingLimitsUpdate,
    options?: RequestOptions,
  ): Promise<BillingLimits> =>
    this.transport.call(contract.billing.setLimits, { params: { id: projectId }, body }, options);

  /** Emails queued this month per category against the caps, and when the counters reset. */
  readonly consumption = (projectId: string, options?: RequestOptions): Promise<BillingConsumption> =>
    this.transport.call(contract.billing.consumption, { params: { id: projectId } }, options);

  /** A Stripe Checkout session for the subscription: send the browser to its `url`. */
  readonly checkout = (
    projectId: string,
    body: CheckoutBody = {},
    options?: RequestOptions,
  ): Promise<BillingRedirect> =>
    this.transport.call(contract.billing.checkout, { params: { id: projectId }, body }, options);

  /** A Stripe billing portal session (409 `CONFLICT` before the first checkout). */
  readonly portal = (projectId: string, options?: RequestOptions): Promise<BillingRedirect> =>
    this.transport.call(contract.billing.portal, { params: { id: projectId } }, options);

  /** The project's Stripe invoices, newest first. */
  readonly invoices = (projectId: string, options?: RequestOptions): Promise<InvoiceList> =>
    this.transport.call(contract.billing.invoices, { params: { id: projectId } }, options);
}
