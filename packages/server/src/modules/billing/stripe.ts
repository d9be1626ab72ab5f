import type { CheckoutBody, Invoices, RedirectSession } from '@pigeon/contract';
import type Stripe from 'stripe';
import type { z } from 'zod';
import type { StripeConfig } from '../../config/index.js';
import { queryRows, sql } from '../../db/query.js';
import type { AppDeps } from '../../deps.js';
import { AppError, conflict } from '../../kit/errors.js';

/**
 * Stripe, used only when STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET and STRIPE_PRICE_ID are set:
 * a project subscribes through Checkout, manages it in the billing portal, and its invoices are
 * read from Stripe. The monthly caps are Pigeon's own and work without it.
 */
const clients = new WeakMap<StripeConfig, Stripe>();

/** Stripe's settings, or 404 BILLING_DISABLED when billing is off (checked before anything else). */
export function stripeConfigOf(deps: AppDeps): StripeConfig {
  const config = deps.config.billing.stripe;
  if (!config) {
    throw new AppError('not-found', 'BILLING_DISABLED', 'Billing is not enabled on this Pigeon deployment', {
      suggestion:
        'Set STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET and STRIPE_PRICE_ID to turn Stripe billing on; GET /config says whether it is.',
    });
  }
  return config;
}

/** The Stripe client; the SDK (hundreds of modules) is loaded on the first billing call, never otherwise. */
export async function stripeOf(deps: AppDeps): Promise<{ stripe: Stripe; config: StripeConfig }> {
  const config = stripeConfigOf(deps);
  let stripe = clients.get(config);
  if (!stripe) {
    const { default: StripeClient } = await import('stripe');
    stripe = clients.get(config) ?? new StripeClient(config.secretKey, { maxNetworkRetries: 1, timeout: 20_000 });
    clients.set(config, stripe);
  }
  return { stripe, config };
}

/** A Stripe failure is the upstream's, not the caller's: 502 with Stripe's message, never our internals. */
async function callStripe<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof AppError) throw err;
    const message = err instanceof Error ? err.message : String(err);
    throw new AppError('upstream', 'UPSTREAM_ERROR', `Stripe refused to ${what}: ${message}`);
  }
}

async function customerIdOf(deps: AppDeps, projectId: string): Promise<string | undefined> {
  const [row] = await queryRows<{ stripe_customer_id: string | null }>(
    deps.db.pool,
    sql`SELECT stripe_customer_id FROM billing_accounts WHERE project_id = ${projectId}::uuid`,
  );
  return row?.stripe_customer_id ?? undefined;
}

/** The project's Stripe customer, created on its first checkout (tagged with the project id). */
async function ensureCustomer(deps: AppDeps, stripe: Stripe, projectId: string): Promise<string> {
  const existing = await customerIdOf(deps, projectId);
  if (existing) return existing;
  const customer = await callStripe('create a customer', () =>
    stripe.customers.create({ metadata: { pigeonProjectId: projectId } }, { idempotencyKey: `customer-${projectId}` }),
  );
  const [row] = await queryRows<{ stripe_customer_id: string }>(
    deps.db.pool,
    sql`INSERT INTO billing_accounts (project_id, stripe_customer_id) VALUES (${projectId}::uuid, ${customer.id})
        ON CONFLICT (project_id) DO UPDATE SET stripe_customer_id = COALESCE(billing_accounts.stripe_customer_id, EXCLUDED.stripe_customer_id)
        RETURNING stripe_customer_id`,
  );
  return row?.stripe_customer_id ?? customer.id;
}

export async function createCheckout(
  deps: AppDeps,
  projectId: string,
  body: z.infer<typeof CheckoutBody>,
): Promise<z.infer<typeof RedirectSession>> {
  const { stripe, config } = await stripeOf(deps);
  const customer = await ensureCustomer(deps, stripe, projectId);
  const back = deps.config.http.publicUrl;
  const session = await callStripe('create a checkout session', () =>
    stripe.checkout.sessions.create({
      mode: 'subscription',
      customer,
      client_reference_id: projectId,
      line_items: [{ price: config.priceId, quantity: 1 }],
      subscription_data: { metadata: { pigeonProjectId: projectId } },
      success_url: body.successUrl ?? `${back}/?billing=success`,
      cancel_url: body.cancelUrl ?? `${back}/?billing=cancelled`,
    }),
  );
  if (!session.url)
    throw new AppError('upstream', 'UPSTREAM_ERROR', 'Stripe returned a checkout session without a URL');
  return { id: session.id, url: session.url };
}

export async function createPortal(deps: AppDeps, projectId: string): Promise<z.infer<typeof RedirectSession>> {
  const { stripe } = await stripeOf(deps);
  const customer = await customerIdOf(deps, projectId);
  if (!customer) {
    throw conflict('This project has no Stripe customer yet', {
      suggestion: 'Start a subscription with POST /users/@me/projects/:id/checkout first.',
    });
  }
  const session = await callStripe('create a billing portal session', () =>
    stripe.billingPortal.sessions.create({ customer, return_url: `${deps.config.http.publicUrl}/` }),
  );
  return { id: session.id, url: session.url };
}

export async function listInvoices(deps: AppDeps, projectId: string): Promise<z.infer<typeof Invoices>> {
  const { stripe } = await stripeOf(deps);
  const customer = await customerIdOf(deps, projectId);
  if (!customer) return { data: [] };
  const invoices = await callStripe('list invoices', () => stripe.invoices.list({ customer, limit: 100 }));
  return {
    data: invoices.data.map((i) => ({
      id: i.id ?? '',
      number: i.number ?? null,
      status: i.status ?? null,
      currency: i.currency,
      amountDue: i.amount_due,
      amountPaid: i.amount_paid,
      createdAt: new Date(i.created * 1000).toISOString(),
      hostedInvoiceUrl: i.hosted_invoice_url ?? null,
      pdfUrl: i.invoice_pdf ?? null,
    })),
  };
}
