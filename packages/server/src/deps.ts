import type { z } from 'zod';
import type { Config } from './config/index.js';
import type { Database } from './db/database.js';
import type { Clock } from './kit/clock.js';
import type { Logger } from './logger.js';
import type { MailTransport } from './mail/mail-transport.js';
import type { Relays } from './mail/relays.js';

export interface EnqueueOptions {
  /** Run at this time instead of now. */
  runAt?: Date;
}

export interface Scheduler {
  /**
   * Queues a run of a job, named by its definition or by a reference to it (name and payload schema):
   * validates the payload against the job's schema and stores the job durably. Returns its id.
   */
  enqueue<P extends z.ZodTypeAny>(
    job: { name: string; payload: P },
    payload: z.infer<P>,
    opts?: EnqueueOptions,
  ): Promise<string>;
  /** Starts running jobs in this process (worker role). */
  startWorker(): Promise<void>;
  /** Stops taking jobs; running jobs get `graceMs` to finish, the rest are unlocked for another worker. */
  stop(graceMs: number): Promise<void>;
}

/** Everything a module needs, built once by `main.ts` (or a test) and passed in. */
export interface AppDeps {
  config: Config;
  db: Database;
  logger: Logger;
  scheduler: Scheduler;
  /** Pigeon's own mail (sign-up, notices): the first relay of the transactional route. */
  mailer: MailTransport;
  /** Every relay with its transport, and the routes per stream (the delivery workers choose among them). */
  relays: Relays;
  /** Check every response against the contract (on in tests, off in production). */
  validateResponses?: boolean;
  startedAt: Date;
  /** The time of every time-based decision (expiry, schedules, rate windows): the system clock, or a test's. */
  clock: Clock;
}
