import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

export interface ExecutionsExpired {
  /** Finished executions visited: deleted (re-entrant workflows) or emptied (the others). */
  executions: number;
  /** Their step runs, deleted with them. */
  stepRuns: number;
}

/**
 * Up to `batch` of the project's executions that finished before `before`, oldest first, in one
 * statement: their step runs go; an execution of a workflow that allows re-entry goes too
 * (re-entry reads only running and waiting ones); any other keeps its row, the record that the
 * contact has been through the workflow, with its context (the trigger event's data) emptied.
 * The statement touches at most `batch` executions and the step runs they went through.
 */
export async function expireFinishedExecutions(
  db: Queryable,
  projectId: string,
  before: Date,
  batch: number,
): Promise<ExecutionsExpired> {
  const [row] = await queryRows<{ executions: number; step_runs: number }>(
    db,
    sql`WITH picked AS (
          SELECT x.id, w.allow_reentry FROM workflow_executions x JOIN workflows w ON w.id = x.workflow_id
          WHERE x.project_id = ${projectId}::uuid AND x.completed_at < ${before}::timestamptz
            AND x.status IN ('COMPLETED', 'EXITED', 'FAILED', 'CANCELLED') AND NOT x.history_cleared
          ORDER BY x.completed_at LIMIT ${batch}::int
          FOR UPDATE OF x SKIP LOCKED
        ), runs AS (
          DELETE FROM workflow_step_runs r USING picked p WHERE r.execution_id = p.id RETURNING 1
        ), deleted AS (
          DELETE FROM workflow_executions x USING picked p WHERE x.id = p.id AND p.allow_reentry RETURNING 1
        ), emptied AS (
          UPDATE workflow_executions x SET history_cleared = true, context = '{}'::jsonb
          FROM picked p WHERE x.id = p.id AND NOT p.allow_reentry RETURNING 1
        )
        -- (A data-modifying WITH runs to completion whether or not the SELECT reads it.)
        SELECT (SELECT count(*) FROM picked)::int AS executions, (SELECT count(*) FROM runs)::int AS step_runs`,
  );
  return { executions: row?.executions ?? 0, stepRuns: row?.step_runs ?? 0 };
}
