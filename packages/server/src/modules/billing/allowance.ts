import type { BillingCategory } from '@pigeon/contract';
import { preparedRows, queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { AppError } from '../../http/errors.js';

/** The month a counter belongs to: its first day, UTC, as PostgreSQL computes it (one clock for every process). */
const PERIOD = sql`date_trunc('month', now() AT TIME ZONE 'UTC')::date`;

/** The cap of one category, read in the statement that charges it. */
const capOf = (projectId: string, category: BillingCategory) =>
  sql`(SELECT CASE ${category}::text WHEN 'transactional' THEN transactional WHEN 'campaigns' THEN campaigns
         ELSE workflows END FROM billing_limits WHERE project_id = ${projectId}::uuid)`;

/** Why mail was refused: what the 403 says. */
export interface Refusal {
  category: BillingCategory;
  limit: number;
  used: number;
  requested: number;
  resetsAt: Date;
}

/** First instant of the month after `period` (a `YYYY-MM-01` date or a Date in that month), UTC. */
export function nextPeriod(period: Date): Date {
  return new Date(Date.UTC(period.getUTCFullYear(), period.getUTCMonth() + 1, 1));
}

export function periodStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/**
 * Counts `count` emails against the project's monthly allowance of `category`, in the caller's
 * transaction, all or nothing: one statement adds them to this month's counter only if the sum
 * stays within the cap. Exact under concurrency, across processes: the counter row is locked by
 * the first writer until its transaction ends, and a concurrent one re-checks the cap against the
 * committed count (ON CONFLICT DO UPDATE … WHERE sees the latest row version). The lock is held
 * until commit, so callers charge last, just before committing. Returns the refusal, or undefined
 * when the emails were counted.
 */
export async function chargeEmails(
  db: Queryable,
  projectId: string,
  category: BillingCategory,
  count: number,
): Promise<Refusal | undefined> {
  if (count <= 0) return undefined;
  const cap = capOf(projectId, category);
  const charged = await preparedRows<{ used: string }>(
    db,
    'billing.charge',
    sql`INSERT INTO billing_usage AS u (project_id, category, period, used)
        SELECT ${projectId}::uuid, ${category}::text, ${PERIOD}, ${count}::bigint
        WHERE ${count}::bigint <= COALESCE(${cap}, ${count}::bigint)
        ON CONFLICT (project_id, category, period) DO UPDATE SET used = u.used + EXCLUDED.used
        WHERE u.used + EXCLUDED.used <= COALESCE(${cap}, u.used + EXCLUDED.used)
        RETURNING used`,
  );
  if (charged.length > 0) return undefined;
  const [state] = await queryRows<{ cap: string | null; used: string | null; period: Date }>(
    db,
    sql`SELECT ${cap} AS cap, ${PERIOD}::timestamp AT TIME ZONE 'UTC' AS period,
          (SELECT used FROM billing_usage WHERE project_id = ${projectId}::uuid AND category = ${category}
             AND period = ${PERIOD}) AS used`,
  );
  const period = state?.period ?? periodStart(new Date());
  return {
    category,
    limit: Number(state?.cap ?? 0),
    used: Number(state?.used ?? 0),
    requested: count,
    resetsAt: nextPeriod(period),
  };
}

/** 403 BILLING_LIMIT_EXCEEDED (DESIGN.md §3: never a 429), saying which cap, how much is left and when it resets. */
export function billingLimitExceeded(refusal: Refusal): AppError {
  const remaining = Math.max(0, refusal.limit - refusal.used);
  return new AppError(
    403,
    'BILLING_LIMIT_EXCEEDED',
    `The monthly ${refusal.category} limit of ${refusal.limit} emails would be exceeded: ${refusal.used} used, ${remaining} left, ${refusal.requested} requested. It resets at ${refusal.resetsAt.toISOString()}`,
    {
      details: {
        category: refusal.category,
        limit: refusal.limit,
        used: refusal.used,
        remaining,
        requested: refusal.requested,
        resetsAt: refusal.resetsAt.toISOString(),
      },
      suggestion: 'Raise the cap with PUT /users/@me/projects/:id/billing-limits, or wait until it resets.',
    },
  );
}

/** `chargeEmails`, refusing with the 403 (which rolls the caller's transaction back). */
export async function requireAllowance(
  db: Queryable,
  projectId: string,
  category: BillingCategory,
  count: number,
): Promise<void> {
  const refusal = await chargeEmails(db, projectId, category, count);
  if (refusal) throw billingLimitExceeded(refusal);
}

/** Gives back emails that were counted but will never be sent (a cancelled campaign), in the month they were counted. */
export async function refundEmails(
  db: Queryable,
  projectId: string,
  category: BillingCategory,
  count: number,
  chargedAt: Date,
): Promise<void> {
  if (count <= 0) return;
  await queryRows(
    db,
    sql`UPDATE billing_usage SET used = greatest(0, used - ${count}::bigint)
        WHERE project_id = ${projectId}::uuid AND category = ${category}
          AND period = date_trunc('month', ${chargedAt}::timestamptz AT TIME ZONE 'UTC')::date`,
  );
}
