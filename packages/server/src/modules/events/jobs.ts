import { sql } from '../../db/query.js';
import { changeInBatches, type JobHandler } from '../background-jobs/runner.js';

/**
 * Deletes every event of one name in committed batches; naturally resumable. The analytics
 * counts of the name are dropped after it by the job's registration (`jobs/index.ts`).
 */
export const deleteEventsByName: JobHandler = async (ctx) => {
  const project = ctx.job.project_id;
  const name = ctx.job.input.name as string;
  await changeInBatches(
    ctx,
    {
      count: sql`SELECT count(*)::int AS n FROM events WHERE project_id = ${project} AND name = ${name}`,
      batch: (size) =>
        sql`DELETE FROM events WHERE id IN (SELECT id FROM events WHERE project_id = ${project} AND name = ${name} LIMIT ${size})`,
    },
    10_000,
  );
};
