import type { JobKind } from '@pigeon/contract';
import { z } from 'zod';
import type { AppDeps } from '../../deps.js';
import { insertJob } from './service.js';

/** The Agenda job that runs every project background job: what queueing needs, without the handlers. */
export const BACKGROUND_JOB = { name: 'background.run', payload: z.object({ jobId: z.string().uuid() }) };

/** Stores the job row, then queues its run: a job id handed out always exists. */
export async function queueJob(
  deps: Pick<AppDeps, 'db' | 'scheduler'>,
  projectId: string,
  kind: JobKind,
  input: Record<string, unknown>,
  file?: Buffer,
): Promise<string> {
  const jobId = await insertJob(deps.db.pool, projectId, kind, input, file);
  await deps.scheduler.enqueue(BACKGROUND_JOB, { jobId });
  return jobId;
}
