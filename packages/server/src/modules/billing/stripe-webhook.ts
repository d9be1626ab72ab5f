import type Stripe from 'stripe';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { AppError, conflict } from '../../kit/errors.js';
import { firstReceipt } from '../webhook-receipts/public.js';
import { stripeOf } from './stripe.js';

/** Stripe's own default: a signature older than this is stale (a replay of a captured request). */
const TOLERANCE_SECONDS = 300;

export const invalidSignature = (message: string) => new AppError('invalid', 'INVALID_SIGNATURE', message);

/**
 * POST /webhooks/incoming/stripe. The `Stripe-Signature` header must sign the raw body with
 * STRIPE_WEBHOOK_SECRET within the last five minutes (forged or stale → 400); each event id is
 * processed once, recorded in the transaction that applies it, so a replay within those minutes is
 * 409 and changes nothing.
 */
export async function receiveStripeEvent(
  deps: AppDeps,
  rawBody: Buffer | undefined,
  signature: string | undefined,
): Promise<{ received: true; type: string }> {
  const { stripe, config } = await stripeOf(deps);
  if (!rawBody || !signature) throw invalidSignature('Missing Stripe-Signature header or body');
  let event: Stripe.Event;
  try {
    event = stripe.webhooks.constructEvent(rawBody, signature, config.webhookSecret, TOLERANCE_SECONDS);
  } catch (err) {
    throw invalidSignature(`Stripe signature check failed: ${(err as Error).message}`);
  }
  await inTransaction(deps.db.pool, async (client) => {
    if (!(await firstReceipt(client, 'stripe', event.id, event.type)))
      throw conflict(`Stripe event ${event.id} was already processed`);
    await applyEvent(client, event);
  });
  return { received: true, type: event.type };
}

async function applyEvent(db: Queryable, event: Stripe.Event): Promise<void> {
  switch (event.type) {
    case 'checkout.session.completed': {
      const session = event.data.object;
      const projectId = session.client_reference_id;
      if (!projectId || !session.customer) return;
      await saveAccount(db, {
        projectId,
        customerId: idOf(session.customer),
        subscriptionId: session.subscription ? idOf(session.subscription) : null,
        status: session.status === 'complete' ? 'active' : null,
      });
      return;
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const subscription = event.data.object;
      const periodEnd = subscription.items?.data?.[0]?.current_period_end;
      await queryRows(
        db,
        sql`UPDATE billing_accounts SET subscription_id = ${subscription.id}, subscription_status = ${subscription.status},
              current_period_end = ${periodEnd ? new Date(periodEnd * 1000) : null}::timestamptz, updated_at = now()
            WHERE stripe_customer_id = ${idOf(subscription.customer)}`,
      );
      return;
    }
    default:
      return; // Other events are acknowledged (Stripe stops retrying) and recorded, nothing more.
  }
}

const idOf = (ref: string | { id: string }) => (typeof ref === 'string' ? ref : ref.id);

async function saveAccount(
  db: Queryable,
  a: { projectId: string; customerId: string; subscriptionId: string | null; status: string | null },
) {
  await queryRows(
    db,
    sql`INSERT INTO billing_accounts (project_id, stripe_customer_id, subscription_id, subscription_status)
        SELECT id, ${a.customerId}, ${a.subscriptionId}, ${a.status} FROM projects WHERE id::text = ${a.projectId}
        ON CONFLICT (project_id) DO UPDATE SET stripe_customer_id = EXCLUDED.stripe_customer_id,
          subscription_id = COALESCE(EXCLUDED.subscription_id, billing_accounts.subscription_id),
          subscription_status = COALESCE(EXCLUDED.subscription_status, billing_accounts.subscription_status),
          updated_at = now()`,
  );
}
