import type pg from 'pg';
import { queryRows, type Sql, sql } from '../../db/query.js';
import { inTransaction } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import type { JobHandler } from '../background-jobs/public.js';
import { getJob, queueJob, recordBatch, setJobTotal } from '../background-jobs/public.js';
import { WEBHOOKS_CHANNEL } from './consumer.js';
import { requireEnabled } from './deliveries.js';
import { findEndpoint } from './endpoints.js';

/** Deliveries looked at per statement (and per committed batch of the job). */
export const RECOVERY_BATCH = 1_000;

/** The job's input: the endpoint, the range of creation times, and when the recovery was asked for. */
interface RecoveryInput {
  endpointId: string;
  after: string;
  before: string;
  askedAt: string;
  /** The last delivery looked at (its `created_at` as PostgreSQL's text, exact to the microsecond). */
  resumeFrom?: { createdAt: string; id: string };
}

/**
 * Queues a recovery: every FAILED delivery of the endpoint created in `[after, before)` is sent
 * once more as a replay. The endpoint must be enabled, as for a replay of one delivery.
 */
export async function queueRecovery(
  deps: AppDeps,
  projectId: string,
  endpointId: string,
  range: { after: string; before?: string },
): Promise<{ jobId: string }> {
  requireEnabled(await findEndpoint(deps.db.pool, projectId, endpointId));
  const askedAt = deps.clock.now().toISOString();
  const input: RecoveryInput = { endpointId, after: range.after, before: range.before ?? askedAt, askedAt };
  return { jobId: await queueJob(deps, projectId, 'recover_deliveries', { ...input }) };
}

/** A recovery of this endpoint; another endpoint's (or project's) job id is a 404. */
export async function getRecovery(deps: AppDeps, projectId: string, endpointId: string, jobId: string) {
  await findEndpoint(deps.db.pool, projectId, endpointId);
  return getJob(deps.db.pool, projectId, jobId, ['recover_deliveries'], sql`input->>'endpointId' = ${endpointId}`);
}

interface WalkedBatch {
  walked: number;
  recovered: number;
  last_at: string | null;
  last_id: string | null;
}

/**
 * One batch: the next `RECOVERY_BATCH` deliveries matching `unwalked` in creation order, the FAILED
 * ones among them made due at `dueAt` as replays; answers how many were looked at and recovered,
 * and the last one looked at.
 */
async function recoverBatch(client: pg.PoolClient, unwalked: Sql, dueAt: string): Promise<WalkedBatch> {
  const [batch] = await queryRows<WalkedBatch>(
    client,
    sql`WITH walk AS (
          SELECT m.id, m.created_at FROM webhook_messages m WHERE ${unwalked}
          ORDER BY m.created_at, m.id LIMIT ${RECOVERY_BATCH}::int
        ), recovered AS (
          UPDATE webhook_messages m SET status = 'PENDING', replay = true, claimed_at = NULL, next_attempt_at = ${dueAt}::timestamptz
          FROM walk WHERE m.id = walk.id AND m.status = 'FAILED' RETURNING m.id
        ), last AS (SELECT id, created_at FROM walk ORDER BY created_at DESC, id DESC LIMIT 1)
        SELECT (SELECT count(*) FROM walk)::int AS walked, (SELECT count(*) FROM recovered)::int AS recovered,
               (SELECT created_at::text FROM last) AS last_at, (SELECT id FROM last) AS last_id`,
  );
  if (batch && batch.recovered > 0) await queryRows(client, sql`SELECT pg_notify(${WEBHOOKS_CHANNEL}, '')`);
  return batch ?? { walked: 0, recovered: 0, last_at: null, last_id: null };
}

/**
 * The recovery job: walks the endpoint's deliveries of the range in creation order, a batch per
 * statement, and makes the FAILED ones due at the time the recovery was asked for, as replays.
 * Each batch commits with the job's counters and where it stopped, so a crash resumes after the
 * last batch; a delivery that fails again stays behind the walk (no loop while the endpoint is
 * still down).
 */
export const recoverDeliveries: JobHandler = async ({ pool, job, heartbeat }) => {
  const input = job.input as unknown as RecoveryInput;
  let from = input.resumeFrom;
  const ofEndpoint = sql`m.project_id = ${job.project_id}::uuid AND m.endpoint_id = ${input.endpointId}::uuid
    AND m.created_at < ${input.before}::timestamptz`;
  // Resuming, the last delivery looked at is the lower bound: with `created_at >= after` beside it
  // the index scan would start at `after` and step over every delivery walked so far.
  const unwalked = () =>
    from
      ? sql`${ofEndpoint} AND (m.created_at, m.id) > (${from.createdAt}::timestamptz, ${from.id}::uuid)`
      : sql`${ofEndpoint} AND m.created_at >= ${input.after}::timestamptz`;
  const [left] = await queryRows<{ n: number }>(
    pool,
    sql`SELECT count(*)::int AS n FROM webhook_messages m WHERE ${unwalked()}`,
  );
  await setJobTotal(pool, job.id, job.processed + (left?.n ?? 0));
  for (;;) {
    const walked = await inTransaction(pool, async (client) => {
      const batch = await recoverBatch(client, unwalked(), input.askedAt);
      if (batch.walked === 0 || !batch.last_at || !batch.last_id) return 0;
      from = { createdAt: batch.last_at, id: batch.last_id };
      await recordBatch(client, job.id, {
        processed: batch.walked,
        updated: batch.recovered,
        skipped: batch.walked - batch.recovered,
        resumeFrom: from,
      });
      return batch.walked;
    });
    if (walked < RECOVERY_BATCH) return;
    await heartbeat();
  }
};
