import type { BillingCategory, BillingConsumption, BillingLimits } from '@pigeon/contract';
import type { z } from 'zod';
import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import type { ProjectRef } from '../../kit/caller.js';
import { refuseIfDisabled } from '../projects/public.js';
import { nextPeriod, periodStart } from './allowance.js';
import { createCheckout, createPortal, listInvoices, stripeConfigOf } from './stripe.js';

type Limits = z.infer<typeof BillingLimits>;

/**
 * The billing routes (`/users/@me/projects/:id/billing-*`) act on the project `authenticate`
 * resolved from the path and checked against the route's permission (a secret key reaches only
 * its own project). Writes are refused for a disabled project.
 */

/** GET …/billing-limits (`project.use`). */
export async function readLimits(deps: AppDeps, project: ProjectRef) {
  return getLimits(deps.db.pool, project.id);
}

/** PUT …/billing-limits (`project.manage`) of an enabled project. */
export async function changeLimits(deps: AppDeps, project: ProjectRef, update: Partial<Limits>) {
  refuseIfDisabled(project);
  return setLimits(deps.db.pool, project.id, update);
}

/** GET …/billing-consumption (`project.use`). */
export async function readConsumption(deps: AppDeps, project: ProjectRef) {
  return consumption(deps, project.id);
}

// The Stripe routes answer 404 BILLING_DISABLED (stripeConfigOf) before their work when billing is off
// (after the route's permission, which authenticate checks first).

export async function startCheckout(deps: AppDeps, project: ProjectRef, body: Parameters<typeof createCheckout>[2]) {
  stripeConfigOf(deps);
  refuseIfDisabled(project);
  return createCheckout(deps, project.id, body);
}

export async function openPortal(deps: AppDeps, project: ProjectRef) {
  stripeConfigOf(deps);
  refuseIfDisabled(project);
  return createPortal(deps, project.id);
}

export async function readInvoices(deps: AppDeps, project: ProjectRef) {
  stripeConfigOf(deps);
  refuseIfDisabled(project);
  return listInvoices(deps, project.id);
}

export async function getLimits(db: Queryable, projectId: string): Promise<Limits> {
  const [row] = await queryRows<Record<BillingCategory, string | null>>(
    db,
    sql`SELECT transactional, campaigns, workflows FROM billing_limits WHERE project_id = ${projectId}::uuid`,
  );
  return {
    transactional: toNumber(row?.transactional),
    campaigns: toNumber(row?.campaigns),
    workflows: toNumber(row?.workflows),
  };
}

/** Categories left out keep their cap; null removes one. */
export async function setLimits(db: Queryable, projectId: string, update: Partial<Limits>): Promise<Limits> {
  const keep = (c: BillingCategory) => update[c] === undefined;
  const value = (c: BillingCategory) => update[c] ?? null;
  await queryRows(
    db,
    sql`INSERT INTO billing_limits AS l (project_id, transactional, campaigns, workflows)
        VALUES (${projectId}::uuid, ${value('transactional')}::bigint, ${value('campaigns')}::bigint, ${value('workflows')}::bigint)
        ON CONFLICT (project_id) DO UPDATE SET
          transactional = CASE WHEN ${keep('transactional')} THEN l.transactional ELSE EXCLUDED.transactional END,
          campaigns = CASE WHEN ${keep('campaigns')} THEN l.campaigns ELSE EXCLUDED.campaigns END,
          workflows = CASE WHEN ${keep('workflows')} THEN l.workflows ELSE EXCLUDED.workflows END,
          updated_at = now()`,
  );
  return getLimits(db, projectId);
}

/** This month's counters against the caps, and the Stripe subscription when there is one. */
export async function consumption(deps: AppDeps, projectId: string): Promise<z.infer<typeof BillingConsumption>> {
  const db = deps.db.pool;
  const [limits, usage, accounts] = await Promise.all([
    getLimits(db, projectId),
    queryRows<{ category: BillingCategory | null; used: string | null; period: Date }>(
      db,
      sql`SELECT u.category, sum(u.used) AS used, m.period
          FROM (SELECT date_trunc('month', now() AT TIME ZONE 'UTC') AS start) t
          CROSS JOIN LATERAL (SELECT t.start AT TIME ZONE 'UTC' AS period) m
          LEFT JOIN billing_usage u ON u.project_id = ${projectId}::uuid AND u.period = t.start::date
          GROUP BY u.category, m.period`,
    ),
    queryRows<{ subscription_status: string | null; current_period_end: Date | null }>(
      db,
      sql`SELECT subscription_status, current_period_end FROM billing_accounts WHERE project_id = ${projectId}::uuid`,
    ),
  ]);
  // The database's clock decides the month, as it does when charging.
  const start = usage[0]?.period ?? periodStart(deps.clock.now());
  const used = new Map(usage.map((u) => [u.category, Number(u.used ?? 0)]));
  const category = (c: BillingCategory) => {
    const n = used.get(c) ?? 0;
    const limit = limits[c];
    return { used: n, limit, remaining: limit === null ? null : Math.max(0, limit - n) };
  };
  const account = accounts[0];
  return {
    periodStart: start.toISOString(),
    resetsAt: nextPeriod(start).toISOString(),
    transactional: category('transactional'),
    campaigns: category('campaigns'),
    workflows: category('workflows'),
    subscription:
      deps.config.billing.stripe && account?.subscription_status
        ? { status: account.subscription_status, currentPeriodEnd: account.current_period_end?.toISOString() ?? null }
        : null,
  };
}

const toNumber = (v: string | null | undefined) => (v === null || v === undefined ? null : Number(v));
