import type { Config } from './config/index.js';
import type { Database } from './db/database.js';
import type { Scheduler } from './jobs/scheduler.js';
import type { Logger } from './logger.js';
import type { Relays } from './mail/relays.js';
import type { MailTransport } from './mail/transport.js';

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
  /** The clock of time-based decisions that tests move (event webhook retries and disabling); default: now. */
  clock?: () => Date;
}

export const nowOf = (deps: Pick<AppDeps, 'clock'>): Date => deps.clock?.() ?? new Date();
