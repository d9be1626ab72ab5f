import { changeInBatches, type JobHandler } from '../background-jobs/runner.js';

/**
 * Deletes every event of one name in committed batches; naturally resumable. The analytics
 * counts of the name are dropped after it by the job's registration (`jobs/index.ts`).
 */
export const deleteEventsByName: JobHandler = async (ctx) => {
  await changeInBatches(
    ctx,
    {
      countSql: 'SELECT count(*)::int AS n FROM events WHERE project_id = $1 AND name = $2',
      batchSql: 'DELETE FROM events WHERE id IN (SELECT id FROM events WHERE project_id = $1 AND name = $2 LIMIT $3)',
    },
    ctx.job.input.name,
    10_000,
  );
};
