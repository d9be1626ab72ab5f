import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type pg from 'pg';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../config/index.js';
import type { ReplicaState } from '../db/replica.js';
import type { Logger } from '../logger.js';
import { type DatabaseNumbers, databaseMetricsNow } from './database.js';
import { askWorkers } from './ipc.js';
import { type MetricsJson, processMetricsNow } from './process.js';
import {
  databaseUp,
  notReady,
  ready,
  replicaInUse,
  replicaLag,
  replicaMetrics,
  scrapeMetrics,
  workerProcesses,
} from './registry.js';

/** How long a scrape waits for a worker process's answer before leaving it out. */
const WORKER_ANSWER_MS = 2000;

export interface MetricsSources {
  pool: pg.Pool;
  config: Config;
  logger: Logger;
  /** The worker processes of `pigeon start` (their metrics come over IPC); none in other setups. */
  workers?: () => ChildProcess[];
  /** The read replica's state, when DATABASE_REPLICA_URL is set. */
  replica?: () => ReplicaState;
  /** `/health` with the relay's last error (the public `/health` leaves it out). */
  health?: () => Promise<{ status: string }>;
  /** One reading of the database's numbers (the system module's `readOperations`). */
  operations: () => Promise<DatabaseNumbers>;
  /** Whether this Pigeon is ready, and the checks that say it is not (the system module's `checkReadiness`). */
  readiness: () => Promise<{ ready: boolean; reasons: Array<{ check: string }> }>;
  /** Every job this code defines: each has its due and running series, at 0 when nothing of it waits. */
  jobNames: string[];
}

/**
 * The metrics listener (METRICS_PORT on METRICS_HOST): `GET /metrics` in Prometheus' text format,
 * and `GET /health` with the details the public one leaves out. One scrape = this process's metrics, each worker process's (asked over IPC, each
 * series labelled with its process), and the database's numbers read once.
 */
export async function startMetricsServer(
  sources: MetricsSources,
): Promise<{ port: number; stop: () => Promise<void> }> {
  const { config, logger } = sources;
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/health' && sources.health) {
      sources.health().then(
        (body) =>
          res
            .writeHead(body.status === 'ok' ? 200 : 503, { 'Content-Type': 'application/json; charset=utf-8' })
            .end(JSON.stringify(body)),
        () => res.writeHead(503).end(),
      );
      return;
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res
        .writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end('Not found: metrics are at GET /metrics (and the detailed health at GET /health)\n');
      return;
    }
    scrape(sources).then(
      (text) => res.writeHead(200, { 'Content-Type': AggregatorRegistry.PROMETHEUS_CONTENT_TYPE }).end(text),
      (err: unknown) => {
        logger.error({ err }, 'metrics scrape failed');
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('metrics scrape failed\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new Error(`METRICS_PORT ${config.metrics.port} is already in use`) : err),
    );
    server.listen(config.metrics.port, config.metrics.host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (config.metrics.port ?? 0);
  logger.info({ host: config.metrics.host, port }, 'metrics listener started');
  return { port, stop: () => closeQuietly(server) };
}

async function scrape(sources: MetricsSources): Promise<string> {
  const children = sources.workers?.() ?? [];
  if (sources.workers) workerProcesses.set(children.length);
  const [own, workers, database] = await Promise.all([
    processMetricsNow(sources.pool),
    askWorkers(children, WORKER_ANSWER_MS),
    fromDatabase(sources),
  ]);
  // Every series carries its process label (or none, for the database's): nothing to add up, so
  // each metric keeps each source's values as they are ('first' of one).
  const all: MetricsJson[] = [
    own,
    ...workers,
    database,
    ...(sources.replica ? [await replicaNow(sources.replica())] : []),
  ];
  const merged = all.map((metrics) => metrics.map((m) => ({ ...m, aggregator: 'first' as const })));
  return AggregatorRegistry.aggregate(merged).metrics();
}

async function fromDatabase({
  logger,
  operations,
  readiness: readReadiness,
  jobNames,
}: MetricsSources): Promise<MetricsJson> {
  const numbers = await operations()
    .then((ops) => databaseMetricsNow(ops, jobNames))
    .catch((err: unknown) => {
      logger.warn({ err }, 'metrics: the database did not answer');
      return undefined;
    });
  scrapeMetrics.resetMetrics();
  databaseUp.set(numbers ? 1 : 0);
  const readiness = await readReadiness().catch(() => undefined);
  ready.set(readiness?.ready ? 1 : 0);
  for (const reason of readiness?.reasons ?? []) notReady.set({ check: reason.check }, 1);
  return [...(numbers ?? []), ...(await scrapeMetrics.getMetricsAsJSON())];
}

function replicaNow(state: ReplicaState): Promise<MetricsJson> {
  replicaLag.set(state.lagSeconds ?? Number.NaN);
  replicaInUse.set(state.inUse ? 1 : 0);
  return replicaMetrics.getMetricsAsJSON();
}

function closeQuietly(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
