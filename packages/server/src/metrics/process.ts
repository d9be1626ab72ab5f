import type pg from 'pg';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import { poolClients, processMetrics } from './registry.js';

export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** This process's own metrics (its pool read now), in prom-client's JSON form. */
export async function processMetricsNow(pool: pg.Pool): Promise<MetricsJson> {
  poolClients.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
  poolClients.set({ state: 'idle' }, pool.idleCount);
  poolClients.set({ state: 'waiting' }, pool.waitingCount);
  return processMetrics.getMetricsAsJSON();
}
