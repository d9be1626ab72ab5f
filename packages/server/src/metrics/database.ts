import type { Queryable } from '../db/sql.js';
import { buildJobRegistry } from '../jobs/index.js';
import { readOperations } from '../modules/system/operations.js';
import {
  campaignRecipientsPending,
  changeFeedLag,
  databaseMetrics,
  emailsQueued,
  emailsQueuedOldestAge,
  emailsSending,
  jobsDue,
  jobsRunning,
  lastDeliveryError,
  relayUp,
  workersAlive,
  workflowExecutions,
  workflowTimersOverdue,
} from './registry.js';

/**
 * Reads the database's numbers into their gauges (labels that disappeared, e.g. a job name with
 * nothing due, disappear from the output too) and returns them in prom-client's JSON form.
 */
export async function databaseMetricsNow(db: Queryable, heartbeatMs: number, relays: string[] = []) {
  const ops = await readOperations(db, heartbeatMs, relays);
  databaseMetrics.resetMetrics();
  for (const q of ops.queue.byPriority) {
    emailsQueued.set({ priority: q.priority }, q.queued);
    emailsQueuedOldestAge.set({ priority: q.priority }, q.oldestDueSeconds);
  }
  emailsSending.set(ops.queue.sending);
  campaignRecipientsPending.set(ops.queue.campaignRecipientsPending);
  for (const f of ops.feed) changeFeedLag.set({ consumer: f.consumer }, f.lagSeconds);
  workflowExecutions.set({ state: 'running' }, ops.workflows.running);
  workflowExecutions.set({ state: 'waiting' }, ops.workflows.waiting);
  workflowTimersOverdue.set(ops.workflows.overdueTimers);
  // Every job this code defines has its series, at 0 when nothing of it is due or running.
  for (const name of jobNames()) {
    jobsDue.set({ job: name }, 0);
    jobsRunning.set({ job: name }, 0);
  }
  for (const j of ops.jobs) {
    jobsDue.set({ job: j.name }, j.due);
    jobsRunning.set({ job: j.name }, j.running);
  }
  workersAlive.set(ops.workers.filter((w) => w.alive).length);
  for (const r of ops.relays) relayUp.set({ relay: r.transport }, r.state === 'up' ? 1 : 0);
  if (ops.lastDeliveryError) lastDeliveryError.set(ops.lastDeliveryError.at.getTime() / 1000);
  return databaseMetrics.getMetricsAsJSON();
}

let names: string[] | undefined;
const jobNames = () => {
  names ??= buildJobRegistry()
    .all()
    .map((def) => def.name);
  return names;
};
