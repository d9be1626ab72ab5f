import { type BillingCategory, type BillingConsumption, type BillingLimits, Role } from '@pigeon/contract';
import type { z } from 'zod';
import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { notFound } from '../../kit/errors.js';
import { MANAGERS, refuseIfDisabled, requireMembership } from '../projects/public.js';
import { nextPeriod, periodStart } from './allowance.js';
import { createCheckout, createPortal, listInvoices, stripeConfigOf } from './stripe.js';

type Limits = z.infer<typeof BillingLimits>;
const ANYONE: Role[] = [...Role.options];

/** Who calls a billing route (`/projects/:id/billing/*`): a project's secret key, or a signed-in user. */
export type BillingCaller = { keyProjectId: string } | { userId: string };

/**
 * The project of a billing route: the secret key's own project (another id is 404, as for any
 * resource of another project), or a project the signed-in user belongs to with one of `roles`.
 * Writes (`write`) are refused for a disabled project.
 */
async function billingProject(
  deps: Pick<AppDeps, 'db'>,
  caller: BillingCaller,
  id: string,
  { roles = ANYONE, write = false }: { roles?: Role[]; write?: boolean } = {},
): Promise<string> {
  if ('keyProjectId' in caller) {
    if (caller.keyProjectId !== id) throw notFound('Project');
    return id;
  }
  const { project } = await requireMembership(deps.db.pool, caller.userId, id, roles);
  if (write) refuseIfDisabled(project);
  return project.id;
}

const managers = { roles: MANAGERS, write: true };

/** GET /projects/:id/billing/limits: any member. */
export async function readLimits(deps: AppDeps, caller: BillingCaller, id: string) {
  return getLimits(deps.db.pool, await billingProject(deps, caller, id));
}

/** PATCH /projects/:id/billing/limits: OWNER or ADMIN of an enabled project. */
export async function changeLimits(deps: AppDeps, caller: BillingCaller, id: string, update: Partial<Limits>) {
  return setLimits(deps.db.pool, await billingProject(deps, caller, id, managers), update);
}

/** GET /projects/:id/billing/consumption: any member. */
export async function readConsumption(deps: AppDeps, caller: BillingCaller, id: string) {
  return consumption(deps, await billingProject(deps, caller, id));
}

// The Stripe routes answer 404 BILLING_DISABLED (stripeConfigOf) before anything else when billing is off.

export async function startCheckout(
  deps: AppDeps,
  caller: BillingCaller,
  id: string,
  body: Parameters<typeof createCheckout>[2],
) {
  stripeConfigOf(deps);
  return createCheckout(deps, await billingProject(deps, caller, id, managers), body);
}

export async function openPortal(deps: AppDeps, caller: BillingCaller, id: string) {
  stripeConfigOf(deps);
  return createPortal(deps, await billingProject(deps, caller, id, managers));
}

export async function readInvoices(deps: AppDeps, caller: BillingCaller, id: string) {
  stripeConfigOf(deps);
  return listInvoices(deps, await billingProject(deps, caller, id, managers));
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
