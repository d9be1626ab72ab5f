import { z } from 'zod';
import type { Config } from '../config/index.js';
import type { AppDeps } from '../deps.js';
import type { Logger } from '../logger.js';

export interface JobContext {
  logger: Logger;
  deps: AppDeps;
  jobId: string;
  /** Report progress 0..100; also renews the job's lock. */
  progress: (percent: number) => Promise<void>;
}

export interface JobDefinition<P extends z.ZodTypeAny = z.ZodTypeAny> {
  name: string;
  payload: P;
  // Method syntax keeps specific definitions assignable to JobDefinition<ZodTypeAny>.
  handler(payload: z.infer<P>, ctx: JobContext): Promise<void>;
  /** Parallel runs of this job per worker process. */
  concurrency?: number;
  /** Retries with exponential backoff after a failed run (default 5). */
  maxRetries?: number;
  /** A lock older than this is considered abandoned (crashed worker) and the job runs again. */
  lockLifetimeMs?: number;
  /** Repeat interval (e.g. `'5 minutes'`, or one read from the config) for periodic jobs; the worker schedules it once. */
  every?: string | ((config: Config) => string);
}

/** The payload of periodic jobs, which carry none. */
export const noPayload = z.undefined().or(z.object({}).strict()).or(z.null());

export const defineJob = <P extends z.ZodTypeAny>(def: JobDefinition<P>): JobDefinition<P> => def;

/** The one list of every job Pigeon knows; handlers are looked up here by name. */
export class JobRegistry {
  private readonly jobs = new Map<string, JobDefinition>();
  private readonly retiredNames = new Set<string>();

  register(...defs: JobDefinition[]): this {
    for (const def of defs) {
      if (this.jobs.has(def.name)) throw new Error(`Job "${def.name}" is registered twice`);
      if (this.retiredNames.has(def.name)) throw new Error(`Job "${def.name}" is registered and retired`);
      this.jobs.set(def.name, def);
    }
    return this;
  }

  /**
   * Names of periodic jobs Pigeon no longer has: a worker removes their stored schedules when it
   * starts. Named one by one, never "everything not registered": during a rolling upgrade an older
   * worker would remove the newer version's jobs.
   */
  retire(...names: string[]): this {
    for (const name of names) {
      if (this.jobs.has(name)) throw new Error(`Job "${name}" is registered and retired`);
      this.retiredNames.add(name);
    }
    return this;
  }

  retired(): string[] {
    return [...this.retiredNames];
  }

  get(name: string): JobDefinition {
    const def = this.jobs.get(name);
    if (!def) throw new Error(`Unknown job "${name}"`);
    return def;
  }

  all(): JobDefinition[] {
    return [...this.jobs.values()];
  }
}
