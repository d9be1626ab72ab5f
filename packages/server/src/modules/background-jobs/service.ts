import type { JobKind, JobStatus } from '@pigeon/contract';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { queryRows, raw, type Sql, sql } from '../../db/query.js';
import { findInProject } from '../../db/scoped.js';
import type { Queryable } from '../../db/sql.js';

export interface JobError {
  row?: number;
  contactId?: string;
  reason: string;
}

export interface JobRow {
  id: string;
  project_id: string;
  kind: JobKind;
  status: JobStatus;
  input: Record<string, unknown>;
  file: Buffer | null;
  total: number;
  processed: number;
  created: number;
  updated: number;
  skipped: number;
  errors: JobError[];
  error: string | null;
  attempts: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** Row-level problems kept per job; the counters still count every one. */
export const MAX_JOB_ERRORS = 100;

export async function insertJob(
  db: Queryable,
  projectId: string,
  kind: JobKind,
  input: Record<string, unknown>,
  file?: Buffer,
): Promise<string> {
  const id = uuidv7();
  await queryRows(
    db,
    sql`INSERT INTO background_jobs (id, project_id, kind, input, file)
        VALUES (${id}, ${projectId}, ${kind}, ${JSON.stringify(input)}, ${file ?? null})`,
  );
  return id;
}

/** Sets how many items the job will process in all (`processed` and `total` drive its progress). */
export async function setJobTotal(db: Queryable, jobId: string, total: number): Promise<void> {
  await queryRows(db, sql`UPDATE background_jobs SET total = ${total} WHERE id = ${jobId}`);
}

/** A job of the caller's project, of one of the given kinds (and matching `extra`); anything else is 404. */
export async function getJob(db: Queryable, projectId: string, id: string, kinds: JobKind[], extra: Sql = raw('true')) {
  const job = await findInProject<JobRow>(
    db,
    'background_jobs',
    projectId,
    id,
    'Job',
    sql`kind = ANY(${kinds}) AND ${extra}`,
  );
  return toJobDto(job);
}

export const toJobDto = (job: JobRow) => ({
  id: job.id,
  kind: job.kind,
  status: job.status,
  progress:
    job.status === 'completed' ? 100 : job.total > 0 ? Math.min(99, Math.floor((job.processed / job.total) * 100)) : 0,
  total: job.total,
  processed: job.processed,
  created: job.created,
  updated: job.updated,
  skipped: job.skipped,
  errors: job.errors,
  error: job.error,
  createdAt: job.created_at.toISOString(),
  startedAt: job.started_at?.toISOString() ?? null,
  finishedAt: job.finished_at?.toISOString() ?? null,
});

export interface BatchOutcome {
  processed: number;
  created?: number;
  updated?: number;
  skipped?: number;
  errors?: JobError[];
  /** Where a handler that walks a range resumes after a crash: kept in the job's `input.resumeFrom`. */
  resumeFrom?: Record<string, unknown>;
}

const resumeFrom = ({ resumeFrom: at }: BatchOutcome): Sql =>
  at === undefined ? raw('') : sql` input = input || jsonb_build_object('resumeFrom', ${JSON.stringify(at)}::jsonb),`;

/** Adds one batch's counts; called on the batch's own transaction client so both commit together. */
export async function recordBatch(db: pg.PoolClient, jobId: string, outcome: BatchOutcome): Promise<void> {
  await queryRows(
    db,
    sql`UPDATE background_jobs SET
          processed = processed + ${outcome.processed}, created = created + ${outcome.created ?? 0},
          updated = updated + ${outcome.updated ?? 0}, skipped = skipped + ${outcome.skipped ?? 0},${resumeFrom(outcome)}
          errors = CASE WHEN jsonb_array_length(errors) >= ${MAX_JOB_ERRORS} THEN errors
                   ELSE (SELECT coalesce(jsonb_agg(e), '[]') FROM (
                     SELECT e FROM jsonb_array_elements(errors || ${JSON.stringify(outcome.errors ?? [])}::jsonb) AS e
                     LIMIT ${MAX_JOB_ERRORS}) limited) END
        WHERE id = ${jobId}`,
  );
}
