import type { JobKind } from '@pigeon/contract';
import type pg from 'pg';
import { queryRows, type Sql, sql, toQuery } from '../../db/query.js';
import { inTransaction } from '../../db/sql.js';
import { defineJob } from '../../jobs/registry.js';
import type { Logger } from '../../logger.js';
import { BACKGROUND_JOB } from './queue.js';
import { type JobRow, recordBatch } from './service.js';

export interface JobHandlerContext {
  pool: pg.Pool;
  job: JobRow;
  logger: Logger;
  /** Re-reads progress and renews the worker's lock; call after every committed batch. */
  heartbeat: () => Promise<void>;
}

/**
 * A handler resumes from `job.processed`: every batch commits its writes together with the
 * job's counters, so a crash loses at most the batch in flight, which is then redone.
 */
export type JobHandler = (ctx: JobHandlerContext) => Promise<void>;

/** Failures that retrying cannot fix (bad input): the job fails at once with this message. */
export class PermanentJobError extends Error {}

const MAX_ATTEMPTS = 5;

/**
 * The job with its handler per kind. The handlers belong to the modules that own the work; the
 * composition root (`job-list/index.ts`) passes them in, so this module imports none of them.
 */
export function createBackgroundJob(handlers: Record<JobKind, JobHandler>) {
  return defineJob({
    ...BACKGROUND_JOB,
    maxRetries: MAX_ATTEMPTS,
    lockLifetimeMs: 60_000,
    concurrency: 2,
    async handler({ jobId }, ctx) {
      const pool = ctx.deps.db.pool;
      const [job] = await queryRows<JobRow>(
        pool,
        sql`UPDATE background_jobs SET status = 'running', attempts = attempts + 1, started_at = coalesce(started_at, now())
            WHERE id = ${jobId} AND status IN ('queued', 'running') RETURNING *`,
      );
      if (!job) return; // finished already (a duplicate delivery) or deleted with its project
      try {
        await handlers[job.kind]({ pool, job, logger: ctx.logger, heartbeat: () => ctx.progress(0) });
        await queryRows(
          pool,
          sql`UPDATE background_jobs SET status = 'completed', finished_at = now(), file = NULL WHERE id = ${jobId}`,
        );
      } catch (err) {
        const permanent = err instanceof PermanentJobError || job.attempts >= MAX_ATTEMPTS;
        if (!permanent) throw err; // Agenda retries with backoff; the handler resumes where it stopped
        ctx.logger.warn({ err, jobId }, 'background job failed');
        const reason = err instanceof PermanentJobError ? err.message : 'The job failed repeatedly; see the server log';
        await queryRows(
          pool,
          sql`UPDATE background_jobs SET status = 'failed', error = ${reason}, finished_at = now(), file = NULL
              WHERE id = ${jobId}`,
        );
      }
    },
  });
}

/**
 * For jobs that change every row matching something: counts the rows once (`count`, a query
 * answering `n`), then runs `batch(size)` (it must touch at most `size` matching rows and leave
 * them non-matching) in committed batches until none is left. Each batch commits with the job's
 * counters, so the job resumes where a crash stopped it.
 */
export async function changeInBatches(
  { pool, job, heartbeat }: JobHandlerContext,
  statements: { count: Sql; batch: (size: number) => Sql },
  batchSize: number,
): Promise<void> {
  const [counted] = await queryRows<{ n: number }>(pool, statements.count);
  await queryRows(pool, sql`UPDATE background_jobs SET total = processed + ${counted?.n ?? 0} WHERE id = ${job.id}`);
  for (;;) {
    const changed = await inTransaction(pool, async (client) => {
      const { text, values } = toQuery(statements.batch(batchSize));
      const result = await client.query(text, values);
      const n = result.rowCount ?? 0;
      await recordBatch(client, job.id, { processed: n, updated: n });
      return n;
    });
    if (changed === 0) return;
    await heartbeat();
  }
}
