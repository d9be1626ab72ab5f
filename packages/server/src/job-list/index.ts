import { JobRegistry } from '../jobs/registry.js';
import { foldCountsJob } from '../modules/analytics/jobs.js';
import { forgetEventCounts } from '../modules/analytics/rollup.js';
import { createBackgroundJob, type JobHandler } from '../modules/background-jobs/runner.js';
import { changeFeedPruneJob } from '../modules/change-feed/jobs.js';
import { contactJobHandlers } from '../modules/contacts/jobs.js';
import { recheckDomainsJob } from '../modules/domains/jobs.js';
import { recoverDeliveries } from '../modules/event-webhooks/recovery.js';
import { deleteEventsByName } from '../modules/events/jobs.js';
import { historyPartitionsJob, retentionJob } from '../modules/retention/jobs.js';
import { segmentsSweepJob } from '../modules/segments/jobs.js';
import { cleanupJob } from './maintenance.js';

/** Deleting an event name also drops its analytics counts (events cannot import analytics, which reads them). */
const deleteEvents: JobHandler = async (ctx) => {
  await deleteEventsByName(ctx);
  await forgetEventCounts(ctx.pool, ctx.job.project_id, ctx.job.input.name as string);
};

/** The project background job, with each module's handler per kind: registered here, not imported by it. */
const backgroundJob = createBackgroundJob({
  ...contactJobHandlers,
  delete_events: deleteEvents,
  recover_deliveries: recoverDeliveries,
});

/** Every job of every module, registered once. Modules add their definitions here. */
export function buildJobRegistry(): JobRegistry {
  return new JobRegistry()
    .register(
      backgroundJob,
      cleanupJob,
      recheckDomainsJob,
      segmentsSweepJob,
      changeFeedPruneJob,
      historyPartitionsJob,
      retentionJob,
      foldCountsJob,
    )
    .retire(
      // Finished webhook deliveries expire with retention.apply since 2026-11-28.
      'webhooks.prune-deliveries',
    );
}
