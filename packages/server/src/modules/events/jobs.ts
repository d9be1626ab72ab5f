import { changeInBatches, type JobHandler } from '../background-jobs/public.js';
import { eventsNamed } from '../event-log/public.js';

/**
 * Deletes every event of one name in committed batches; naturally resumable. The analytics
 * counts of the name are dropped after it by the job's registration (`job-list/index.ts`).
 */
export const deleteEventsByName: JobHandler = async (ctx) => {
  const project = ctx.job.project_id;
  const name = ctx.job.input.name as string;
  await changeInBatches(ctx, eventsNamed(project, name), 10_000);
};
