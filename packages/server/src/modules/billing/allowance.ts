import type { BillingCategory } from '@pigeon/contract';
import { preparedRows, queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { AppError } from '../../kit/errors.js';

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

/** Counter rows per (project, category, month): uncapped writers spread over them by backend pid. */
const SHARDS = 16;
const MY_SHARD = sql`(pg_backend_pid() % ${SHARDS})::smallint`;

/** This month's total of a category, over its shards. */
const usedSql = (projectId: string, category: BillingCategory) =>
  sql`(SELECT COALESCE(sum(used), 0) FROM billing_usage
       WHERE project_id = ${projectId}::uuid AND category = ${category} AND period = ${PERIOD})`;

/**
 * Counts `count` emails against the project's monthly allowance of `category`, in the caller's
 * transaction, all or nothing. Returns the refusal, or undefined when the emails were counted.
 *
 * Without a cap, one statement adds them to the counter shard of this connection (16 shards, so
 * concurrent senders of one project rarely wait on each other). With a cap, the writers of that
 * project and category take turns on a transaction-scoped advisory lock, held until commit; the
 * next statement (a new snapshot in READ COMMITTED, so it sees every commit made before the lock
 * was granted) sums the shards and adds the emails only if the total stays within the cap. Exact
 * under concurrency across processes; a refusal throws nothing, so the caller decides (roll back,
 * or fail a workflow step). Callers charge last, just before committing: a capped category is
 * serialised from the charge to the commit.
 */
export async function chargeEmails(
  db: Queryable,
  projectId: string,
  category: BillingCategory,
  count: number,
): Promise<Refusal | undefined> {
  if (count <= 0) return undefined;
  const cap = capOf(projectId, category);
  const [uncapped] = await preparedRows<{ cap: string | null; charged: boolean }>(
    db,
    'billing.charge-uncapped',
    sql`WITH l AS (SELECT ${cap} AS cap), added AS (
          INSERT INTO billing_usage AS u (project_id, category, period, shard, used)
          SELECT ${projectId}::uuid, ${category}::text, ${PERIOD}, ${MY_SHARD}, ${count}::bigint FROM l WHERE l.cap IS NULL
          ON CONFLICT (project_id, category, period, shard) DO UPDATE SET used = u.used + EXCLUDED.used
          RETURNING 1
        ) SELECT (SELECT cap FROM l) AS cap, EXISTS (SELECT 1 FROM added) AS charged`,
  );
  if (uncapped?.charged) return undefined;
  await preparedRows(
    db,
    'billing.turn',
    sql`SELECT pg_advisory_xact_lock(hashtextextended(${`billing:${projectId}:${category}`}::text, 0))`,
  );
  const [capped] = await preparedRows<{ charged: boolean; cap: string | null; used: string; period: Date }>(
    db,
    'billing.charge-capped',
    sql`WITH l AS (SELECT ${cap} AS cap, ${usedSql(projectId, category)} AS used), added AS (
          INSERT INTO billing_usage AS u (project_id, category, period, shard, used)
          SELECT ${projectId}::uuid, ${category}::text, ${PERIOD}, ${MY_SHARD}, ${count}::bigint FROM l
          WHERE l.cap IS NULL OR l.used + ${count}::bigint <= l.cap
          ON CONFLICT (project_id, category, period, shard) DO UPDATE SET used = u.used + EXCLUDED.used
          RETURNING 1
        ) SELECT EXISTS (SELECT 1 FROM added) AS charged, l.cap, l.used,
            ${PERIOD}::timestamp AT TIME ZONE 'UTC' AS period FROM l`,
  );
  if (!capped || capped.charged) return undefined;
  return {
    category,
    limit: Number(capped.cap ?? 0),
    used: Number(capped.used),
    requested: count,
    resetsAt: nextPeriod(capped.period),
  };
}

/** 403 BILLING_LIMIT_EXCEEDED (DESIGN.md §3: never a 429), saying which cap, how much is left and when it resets. */
export function billingLimitExceeded(refusal: Refusal): AppError {
  const remaining = Math.max(0, refusal.limit - refusal.used);
  return new AppError(
    'forbidden',
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
  // A negative amount on this connection's shard: the month's sum drops by `count`.
  await queryRows(
    db,
    sql`INSERT INTO billing_usage AS u (project_id, category, period, shard, used)
        VALUES (${projectId}::uuid, ${category}, date_trunc('month', ${chargedAt}::timestamptz AT TIME ZONE 'UTC')::date,
          ${MY_SHARD}, ${-count}::bigint)
        ON CONFLICT (project_id, category, period, shard) DO UPDATE SET used = u.used + EXCLUDED.used`,
  );
}
