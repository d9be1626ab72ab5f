import type { TransportState } from '@pigeon/contract';
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
 * The database's numbers the gauges show: what the system module's `readOperations` reads, as far
 * as the metrics need it (main.ts passes the reading in, so this floor imports no module).
 */
export interface DatabaseNumbers {
  queue: {
    byPriority: Array<{ priority: string; queued: number; oldestDueSeconds: number }>;
    sending: number;
    campaignRecipientsPending: number;
  };
  feed: Array<{ consumer: string; lagSeconds: number }>;
  workflows: { running: number; waiting: number; overdueTimers: number };
  jobs: Array<{ name: string; due: number; running: number }>;
  workers: Array<{ alive: boolean }>;
  relays: Array<{ transport: string; state: TransportState }>;
  lastDeliveryError: { at: Date } | null;
}

/**
 * Sets the gauges from one reading of the database's numbers (labels that disappeared, e.g. a job
 * name with nothing due, disappear from the output too) and returns them in prom-client's JSON
 * form. `jobNames`: every job this code defines, each with its series even at 0.
 */
export async function databaseMetricsNow(ops: DatabaseNumbers, jobNames: string[]) {
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
  for (const name of jobNames) {
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
