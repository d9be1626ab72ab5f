import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import { join } from 'node:path';
import type { Express } from 'express';
import { secureDataDir } from './config/data-dir.js';
import type { Config } from './config/index.js';
import { keyringOf } from './db/at-rest.js';
import { openDatabase } from './db/database.js';
import { migrateWithLock } from './db/migrate.js';
import type { AppDeps } from './deps.js';
import { buildJobRegistry } from './job-list/index.js';
import { startListenHub } from './jobs/listen-hub.js';
import type { JobDefinition } from './jobs/registry.js';
import { createScheduler } from './jobs/scheduler.js';
import { clockOf, systemClock } from './kit/clock.js';
import type { Logger } from './logger.js';
import { createRelays } from './mail/relays.js';
import { answerMetricsRequests } from './metrics/ipc.js';
import { labelThisProcess } from './metrics/registry.js';
import { analyticsCountsConsumer } from './modules/analytics/rollup.js';
import { registerConsumer, startChangeFeed } from './modules/change-feed/feed.js';
import { startInboundReceiver } from './modules/deliverability/inbound.js';
import { sealPlaintextDkimKeys } from './modules/domains/key-storage.js';
import { EVENT_WEBHOOKS_CONSUMER } from './modules/event-webhooks/consumer.js';
import { bootstrapFirstRun } from './modules/projects/bootstrap.js';
import { trackedSegmentsConsumer } from './modules/segments/realtime.js';
import { startSmtpSubmission } from './modules/smtp-submission/server.js';
import { readOperations } from './modules/system/operations.js';
import { checkSharedSecrets, refuseGeneratedSecretsOnSharedDatabase } from './modules/system/secret-fingerprints.js';
import { checkHealth, checkReadiness } from './modules/system/service.js';
import { workflowTriggersConsumer } from './modules/workflows/triggers.js';

/** The consumers of the contact change feed, but the event webhooks' (built by its worker, on its sender). */
const FEED_CONSUMERS = [trackedSegmentsConsumer, workflowTriggersConsumer, analyticsCountsConsumer];
const FEED_CONSUMER_NAMES = [...FEED_CONSUMERS.map((c) => c.name), EVENT_WEBHOOKS_CONSUMER];

export interface StartOptions {
  /** Check every response against the contract (tests). */
  validateResponses?: boolean;
  /** Extra routes mounted before the 404 handler (tests). */
  mountExtraRoutes?: (app: Express, deps: AppDeps) => void;
  /** The time of time-based decisions, when a test moves it (`deps.clock`); default: the system clock. */
  clock?: () => Date;
  /** Extra job definitions (tests). */
  extraJobs?: JobDefinition[];
  /**
   * Started once the API listens (so the database is up and migrated and the public URL is final);
   * stopped together with the HTTP server, before the scheduler and the database close.
   * `pigeon start` forks its worker processes here.
   */
  alongside?: (deps: AppDeps) => Promise<Companion>;
  /** A worker process of `pigeon start` (its slot, from 1): its metrics go to the parent over IPC. */
  supervisedSlot?: number;
}

/** What runs alongside the API (`pigeon start`'s worker processes). */
export interface Companion {
  stop: () => Promise<void>;
  /** Its processes, asked for their metrics at each scrape. */
  children?: () => ChildProcess[];
}

export interface RunningPigeon {
  deps: AppDeps;
  /** What a person starting Pigeon on the embedded defaults needs to know (sign-in, keys). */
  welcome?: string;
  server?: Server;
  url?: string;
  /** The port the inbound SMTP receiver (bounces and complaints) listens on, when it runs. */
  inboundSmtpPort?: number;
  /** The SMTP submission listeners' ports (STARTTLS, implicit TLS), when they run. */
  submissionPorts?: { port?: number; tlsPort?: number };
  /** The metrics listener's port (METRICS_PORT set). */
  metricsPort?: number;
  stop: () => Promise<void>;
}

/**
 * Wires config → database → migrations → scheduler → mailer → app → listen, according to the
 * process role: `all` (API + workers), `api` (HTTP only) or `worker` (jobs only).
 */
/** Files 0600, directories 0700: anything wider (an older Pigeon, a copy, a umask) is narrowed and logged. */
function checkDataDir(config: Config, logger: Logger): void {
  // A worker process of `pigeon start` gets DATABASE_URL yet shares the embedded PostgreSQL's data
  // dir: narrowing it to 0700 there locks the `postgres` user out (PANIC at the next checkpoint).
  const embedded = !config.database.url || existsSync(join(config.dataDir, 'postgres', 'PG_VERSION'));
  const traversable = embedded && process.getuid?.() === 0;
  const { fixed } = secureDataDir(config.dataDir, { traversable });
  if (fixed.length > 0) {
    logger.warn({ count: fixed.length, examples: fixed.slice(0, 5) }, 'narrowed permissions in the data dir');
  }
}

export async function startPigeon(config: Config, logger: Logger, options: StartOptions = {}): Promise<RunningPigeon> {
  checkDataDir(config, logger);
  refuseGeneratedSecretsOnSharedDatabase(config);
  // Node's runtime metrics sample the event loop and watch GC: only when someone scrapes them.
  // (A supervised worker inherits METRICS_PORT from `pigeon start` and answers over IPC.)
  if (config.metrics.port !== undefined) {
    labelThisProcess(options.supervisedSlot ? `worker-${options.supervisedSlot}` : config.role);
  }
  // Only processes that answer requests read the replica (delivery and the feed need the primary).
  const db = await openDatabase(config, logger, { withReplica: config.role !== 'worker' });
  const cleanups: Array<() => Promise<void>> = [db.close];
  const shutdown = () => runCleanups(cleanups, logger);
  try {
    const applied = await migrateWithLock(db, logger);
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    await checkSharedSecrets(db.pool, config);
    // Cursors exist before any request is served: a consumer starts at its registration, so an
    // event recorded before the first worker came up would otherwise never reach it.
    for (const name of FEED_CONSUMER_NAMES) await registerConsumer(db.pool, name);
    const sealed = await sealPlaintextDkimKeys(db.pool, keyringOf(config));
    if (sealed > 0) logger.info({ sealed }, 'DKIM private keys stored before encryption are now encrypted');

    let deps: AppDeps | undefined;
    const scheduler = await createScheduler({
      pool: db.pool,
      registry: buildJobRegistry().register(...(options.extraJobs ?? [])),
      logger,
      concurrency: config.jobs.concurrency,
      pollIntervalMs: config.jobs.pollIntervalMs,
      deps: () => deps as AppDeps,
    });
    cleanups.unshift(() => scheduler.stop(config.shutdownTimeoutMs));
    const relays = createRelays(config.mail);
    cleanups.unshift(async () => relays.close());
    const mailer = relays.system.transport;
    const clock = options.clock ? clockOf(options.clock) : systemClock;
    deps = {
      config,
      db,
      logger,
      scheduler,
      mailer,
      relays,
      startedAt: new Date(),
      validateResponses: options.validateResponses,
      clock,
    };

    if (config.role !== 'api') {
      // Loaded only here: the API process of `pigeon start` (role api) never runs delivery, the
      // campaign dispatcher, the workflow runner or webhook delivery, so it never loads them.
      const [{ CampaignComposer }, { startCampaignDispatcher }, { startDelivery }, { startEventWebhooks }] =
        await Promise.all([
          import('./modules/campaigns/delivery-content.js'),
          import('./modules/campaigns/sending.js'),
          import('./modules/emails/delivery.js'),
          import('./modules/event-webhooks/worker.js'),
        ]);
      const [{ startHeartbeat }, { startWorkflowRunner }] = await Promise.all([
        import('./modules/system/heartbeat.js'),
        import('./modules/workflows/runner.js'),
      ]);
      await scheduler.startWorker();
      // One LISTEN connection for every loop of this process; closed after them (cleanups run last-in first).
      const hub = await startListenHub(db.url, logger);
      cleanups.unshift(() => hub.stop());
      const delivery = await startDelivery(deps, hub, { campaign: new CampaignComposer(deps.db.pool, deps.config) });
      cleanups.unshift(() => delivery.stop(config.shutdownTimeoutMs));
      // The webhooks' sender stops first (cleanups run last-in first): a feed batch waiting on
      // its attempts lets them go, writes them, and the feed then stops.
      const webhooks = await startEventWebhooks(deps, hub);
      const feed = await startChangeFeed(deps, hub, [...FEED_CONSUMERS, webhooks.consumer], config.changeFeed);
      cleanups.unshift(() => feed.stop());
      cleanups.unshift(() => webhooks.stop(config.shutdownTimeoutMs));
      const dispatcher = await startCampaignDispatcher(deps, hub);
      cleanups.unshift(() => dispatcher.stop(config.shutdownTimeoutMs));
      const workflows = await startWorkflowRunner(deps, hub);
      cleanups.unshift(() => workflows.stop(config.shutdownTimeoutMs));
      const heartbeat = startHeartbeat(deps);
      cleanups.unshift(heartbeat.stop);
    }
    if (config.role === 'worker') {
      if (options.supervisedSlot) {
        answerMetricsRequests(db.pool);
        return { deps, stop: shutdown };
      }
      const metricsPort = await serveMetrics(deps, cleanups);
      return { deps, metricsPort, stop: shutdown };
    }
    const welcome = db.embedded ? await bootstrapFirstRun(deps) : undefined;

    // Loaded here, not at the top: a worker process never needs the HTTP stack (express, the
    // routers, the OpenAPI document), so it never loads it (tens of MB of RSS per worker).
    const inbound = await startInboundReceiver(deps);
    if (inbound) cleanups.unshift(inbound.stop);
    const submission = await startSmtpSubmission(deps);
    if (submission) cleanups.unshift(submission.stop);
    const { requestListener } = await import('./http/fast-routes.js');
    const server = await listen(requestListener(deps, { mountExtraRoutes: options.mountExtraRoutes }), config);
    let companion: Companion | undefined;
    // The HTTP server and what runs alongside it (worker processes) drain at the same time.
    cleanups.unshift(async () => {
      await Promise.all([closeServer(server, config.shutdownTimeoutMs), companion?.stop()]);
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.http.port;
    // PORT=0 (tests) without PUBLIC_URL: links in mail must name the port actually bound.
    if (config.http.port === 0 && !config.http.publicUrlGiven) config.http.publicUrl = `http://localhost:${port}`;
    companion = await options.alongside?.(deps);
    const metricsPort = await serveMetrics(deps, cleanups, companion?.children);
    return {
      deps,
      server,
      url: `http://localhost:${port}`,
      welcome,
      inboundSmtpPort: inbound?.port,
      submissionPorts: submission && { port: submission.port, tlsPort: submission.tlsPort },
      metricsPort,
      stop: shutdown,
    };
  } catch (err) {
    await shutdown();
    throw err;
  }
}

/** The metrics listener, when METRICS_PORT is set; closed first at shutdown. */
async function serveMetrics(
  deps: AppDeps,
  cleanups: Array<() => Promise<void>>,
  workers?: () => ChildProcess[],
): Promise<number | undefined> {
  if (deps.config.metrics.port === undefined) return undefined;
  const { startMetricsServer } = await import('./metrics/server.js');
  const relays = deps.config.mail.relays.map((r) => r.name);
  const metrics = await startMetricsServer({
    pool: deps.db.pool,
    config: deps.config,
    logger: deps.logger,
    workers,
    replica: deps.db.replica?.state,
    health: () => checkHealth(deps, true),
    operations: () => readOperations(deps.db.pool, deps.config.health.heartbeatMs, relays),
    readiness: () => checkReadiness(deps.db.pool, deps.config),
    jobNames: buildJobRegistry()
      .all()
      .map((def) => def.name),
  });
  cleanups.unshift(metrics.stop);
  return metrics.port;
}

function listen(listener: RequestListener, config: Config): Promise<Server> {
  return new Promise((resolve, reject) => {
    // An idle keep-alive connection stays open longer than a load balancer's own idle timeout (60 s
    // on the common ones): a server that closes first races the balancer reusing the connection,
    // and the balancer answers that request 502.
    const server = createServer(listener);
    server.keepAliveTimeout = config.http.keepAliveSeconds * 1000;
    // Past this many open connections new ones are closed at once: each costs memory and a socket.
    server.maxConnections = config.http.maxConnections;
    server.listen(config.http.port, config.http.host);
    server.once('listening', () => resolve(server));
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new Error(`PORT ${config.http.port} is already in use`) : err),
    );
  });
}

/**
 * Stops accepting connections and lets in-flight requests finish. Keep-alive connections are
 * closed as soon as they go idle; whatever is still open at the deadline is cut.
 */
function closeServer(server: Server, deadlineMs: number): Promise<void> {
  return new Promise((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    const force = setTimeout(() => server.closeAllConnections(), deadlineMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

async function runCleanups(cleanups: Array<() => Promise<void>>, logger: Logger): Promise<void> {
  while (cleanups.length > 0) {
    const cleanup = cleanups.shift() as () => Promise<void>;
    await cleanup().catch((err) => logger.error({ err }, 'error during shutdown'));
  }
}
