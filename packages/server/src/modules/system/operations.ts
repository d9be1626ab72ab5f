import type { Queryable } from '../../db/sql.js';
import { jobStats } from '../../jobs/scheduler.js';
import { readRelayStatuses, type TransportStatus } from '../../mail/transport-status.js';
import { feedLag } from '../change-feed/public.js';
import { type QueueStats, queueStats } from '../email-states/public.js';
import { executionStats } from '../workflows/public.js';
import { type WorkerHeartbeat, workerHeartbeats } from './heartbeat.js';

/** What an operator wants to know about a running Pigeon, read from its database (any process, any host). */
export interface Operations {
  queue: QueueStats;
  feed: Array<{ consumer: string; lagSeconds: number }>;
  workflows: { running: number; waiting: number; overdueTimers: number };
  jobs: Array<{ name: string; due: number; running: number }>;
  workers: WorkerHeartbeat[];
  lastDeliveryError: { message: string; at: Date; worker: string } | null;
  /** Each configured relay's breaker as the workers last recorded it (`transport_status`). */
  relays: TransportStatus[];
}

/** One read of each owning module's numbers, in parallel: `pigeon status` and the metrics listener. */
export async function readOperations(db: Queryable, heartbeatMs: number, relays: string[] = []): Promise<Operations> {
  const [queue, feed, workflows, jobs, workers, relayStates] = await Promise.all([
    queueStats(db),
    feedLag(db),
    executionStats(db),
    jobStats(db),
    workerHeartbeats(db, heartbeatMs),
    relays.length ? readRelayStatuses(db, relays) : [],
  ]);
  return { queue, feed, workflows, jobs, workers, lastDeliveryError: latestError(workers), relays: relayStates };
}

function latestError(workers: WorkerHeartbeat[]): Operations['lastDeliveryError'] {
  let latest: Operations['lastDeliveryError'] = null;
  for (const w of workers) {
    if (w.lastError && w.lastErrorAt && (!latest || w.lastErrorAt > latest.at)) {
      latest = { message: w.lastError, at: w.lastErrorAt, worker: w.id };
    }
  }
  return latest;
}
