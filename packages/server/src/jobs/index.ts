import { backgroundJob } from '../modules/background-jobs/registry.js';
import { changeFeedPruneJob } from '../modules/change-feed/jobs.js';
import { recheckDomainsJob } from '../modules/domains/jobs.js';
import { webhookDeliveriesPruneJob } from '../modules/event-webhooks/jobs.js';
import { segmentsSweepJob } from '../modules/segments/jobs.js';
import { cleanupJob } from './maintenance.js';
import { JobRegistry } from './registry.js';

/** Every job of every module, registered once. Modules add their definitions here. */
export function buildJobRegistry(): JobRegistry {
  return new JobRegistry().register(
    backgroundJob,
    cleanupJob,
    recheckDomainsJob,
    segmentsSweepJob,
    changeFeedPruneJob,
    webhookDeliveriesPruneJob,
  );
}
