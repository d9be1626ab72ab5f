import type { Agenda, Job, NotificationChannel } from 'agenda';
import type pg from 'pg';
import { queryRows, sql } from '../db/query.js';
import type { Queryable } from '../db/sql.js';
import type { AppDeps, Scheduler } from '../deps.js';
import type { Logger } from '../logger.js';
import { jobFailures, zeroJobFailures } from '../metrics/registry.js';
import type { JobDefinition, JobRegistry } from './registry.js';

interface Options {
  pool: pg.Pool;
  registry: JobRegistry;
  logger: Logger;
  concurrency: number;
  /** How often due jobs are looked for; new jobs also wake workers at once through LISTEN/NOTIFY. */
  pollIntervalMs: number;
  /** Resolved when a job runs: handlers may use any dependency, the scheduler included. */
  deps: () => AppDeps;
}

/** Session advisory lock held while Agenda creates its schema (any 64-bit number of our own). */
const AGENDA_SCHEMA_LOCK = 7_243_001_117;

/**
 * Agenda creates its table, indexes and trigger function when it connects, with DDL that fails
 * with "tuple concurrently updated" when two processes run it at once (`pigeon start` starts its
 * workers together): the processes take turns.
 */
async function oneProcessAtATime<T>(pool: pg.Pool, work: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await queryRows(client, sql`SELECT pg_advisory_lock(${AGENDA_SCHEMA_LOCK})`);
    return await work();
  } finally {
    await queryRows(client, sql`SELECT pg_advisory_unlock(${AGENDA_SCHEMA_LOCK})`).catch(() => {});
    client.release();
  }
}

/** Agenda connects (and creates its schema) as soon as it is constructed; resolved when it is ready. */
async function connectAgenda(opts: Options) {
  const [{ PostgresBackend }, { Agenda }] = await Promise.all([import('@agendajs/postgres-backend'), import('agenda')]);
  const backend = new PostgresBackend({ pool: opts.pool });
  const agenda = new Agenda({
    backend,
    processEvery: opts.pollIntervalMs,
    defaultConcurrency: 5,
    maxConcurrency: opts.concurrency,
  });
  agenda.on('error', (err) => opts.logger.error({ err }, 'job scheduler error'));
  // The LISTEN connection reconnects by itself; without a listener its errors would crash the process.
  (backend.notificationChannel as unknown as NodeJS.EventEmitter | undefined)?.on('error', (err) =>
    opts.logger.warn({ err }, 'job notification channel error'),
  );
  await new Promise<void>((resolve, reject) => {
    agenda.once('ready', resolve);
    agenda.once('error', reject);
  });
  return { agenda, channel: backend.notificationChannel };
}

/**
 * Agenda sends its NOTIFY (which wakes the workers' LISTEN at once) only while its notification
 * channel is connected, and it connects it only in `start()`, which an API process never calls:
 * without this, a job queued by an API request waited for a worker's next poll
 * (`JOB_POLL_INTERVAL_MS`, 5 s by default). So a process that queues jobs without running them
 * connects the channel itself (one pooled connection, LISTENing to nothing it acts on).
 */
function publishingChannel(channel: NotificationChannel | undefined, logger: Logger) {
  let connecting: Promise<void> | undefined;
  return {
    /**
     * Connects once. A failure is logged (the job still runs at a worker's next poll) and the
     * channel retries by itself; it is not connected a second time (that would hold a second connection).
     */
    connect() {
      if (!channel) return Promise.resolve();
      connecting ??= channel.connect().catch((err) => {
        logger.warn({ err }, 'job notification channel not connected; queued jobs wait for a poll until it is');
      });
      return connecting;
    },
    /** Before Agenda's own `start()` connects it again, and at stop (also ends its retries). */
    async disconnect() {
      if (!channel || !connecting) return;
      await connecting;
      connecting = undefined;
      await channel.disconnect().catch(() => {});
    },
  };
}

/**
 * Agenda on PostgreSQL (same database), behind Pigeon's job registry. Agenda (and its date and cron
 * libraries) is loaded and connected on first use: at `startWorker()` in a worker, at the first
 * enqueue in an API process, which may never queue a job.
 */
export async function createScheduler(opts: Options): Promise<Scheduler> {
  type Connected = { agenda: Agenda; publishing: ReturnType<typeof publishingChannel> };
  let connecting: Promise<Connected> | undefined;
  const connect = () => {
    if (!connecting) {
      connecting = oneProcessAtATime(opts.pool, () => connectAgenda(opts)).then(async ({ agenda, channel }) => ({
        agenda: await defineJobs(agenda, opts),
        publishing: publishingChannel(channel, opts.logger),
      }));
      // A failed connection is not kept: the next use tries again.
      connecting.catch(() => {
        connecting = undefined;
      });
    }
    return connecting;
  };
  /** startWorker() was called: Agenda's `start()` owns the notification channel. */
  let working = false;
  zeroJobFailures(opts.registry.all().map((def) => def.name));

  return {
    async enqueue(def, payload, enqueueOpts) {
      const data = def.payload.parse(payload);
      const { agenda, publishing } = await connect();
      if (!working) await publishing.connect();
      const job = enqueueOpts?.runAt
        ? await agenda.schedule(enqueueOpts.runAt, def.name, data)
        : await agenda.now(def.name, data);
      return String(job.attrs._id);
    },
    async startWorker() {
      working = true;
      const { agenda, publishing } = await connect();
      await publishing.disconnect();
      await agenda.start();
      for (const def of opts.registry.all()) {
        const every = typeof def.every === 'function' ? def.every(opts.deps().config) : def.every;
        if (every) await agenda.every(every, def.name, undefined, { skipImmediate: true });
      }
      const retired = opts.registry.retired();
      if (retired.length > 0) await agenda.cancel({ names: retired });
    },
    async stop(graceMs) {
      const connected = await connecting?.catch(() => undefined);
      if (!connected) return;
      const { agenda, publishing } = connected;
      if (working) await agenda.drain({ timeout: graceMs, closeConnection: false });
      await agenda.stop(false);
      await publishing.disconnect();
    },
  };
}

async function defineJobs(agenda: Agenda, opts: Options): Promise<Agenda> {
  const { backoffStrategies } = await import('agenda');
  for (const def of opts.registry.all()) {
    agenda.define(def.name, (job: Job) => runJob(def, job, opts), {
      concurrency: def.concurrency ?? 5,
      lockLifetime: def.lockLifetimeMs ?? 10 * 60_000,
      backoff: backoffStrategies.exponential({ delay: 1000, maxRetries: def.maxRetries ?? 5 }),
    });
  }
  agenda.on('fail', (err, job) => {
    jobFailures.inc({ job: job.attrs.name });
    opts.logger.warn({ err, job: job.attrs.name, jobId: String(job.attrs._id) }, 'job failed');
  });
  return agenda;
}

async function runJob(def: JobDefinition, job: Job, opts: Options): Promise<void> {
  const jobId = String(job.attrs._id);
  const logger = opts.logger.child({ job: def.name, jobId });
  const payload = def.payload.parse(job.attrs.data);
  await def.handler(payload, {
    logger,
    deps: opts.deps(),
    jobId,
    progress: (percent) => job.touch(Math.max(0, Math.min(100, percent))),
  });
}

/** Agenda's jobs due (and not taken) and running now, per job name (names come from the job registry). */
export async function jobStats(db: Queryable): Promise<Array<{ name: string; due: number; running: number }>> {
  // Agenda creates its table when a process first uses it (a worker starting, an API's first
  // enqueue): before that there are no jobs to count.
  return queryRows<{ name: string; due: number; running: number }>(
    db,
    sql`SELECT name, count(*) FILTER (WHERE locked_at IS NULL)::int AS due,
               count(*) FILTER (WHERE locked_at IS NOT NULL)::int AS running
        FROM agenda_jobs
        WHERE (next_run_at <= now() AND NOT COALESCE(disabled, false)) OR locked_at IS NOT NULL
        GROUP BY name ORDER BY name`,
  ).catch((err: { code?: string }) => {
    if (err.code === UNDEFINED_TABLE) return [];
    throw err;
  });
}

const UNDEFINED_TABLE = '42P01';
