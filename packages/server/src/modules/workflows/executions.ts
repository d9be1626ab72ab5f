import type { Execution, ExecutionListQuery, ExecutionStatus, StepRunStatus, WorkflowStepType } from '@pigeon/contract';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import type { z } from 'zod';
import { queryRows, raw, type Sql, sql } from '../../db/query.js';
import { findInProject, isUuid } from '../../db/scoped.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import { decodeCursor, encodeCursor } from '../../kit/cursor.js';
import { AppError, conflict, notFound } from '../../kit/errors.js';
import { entryStep, graphProblems, loadGraph } from './graph.js';
import { findWorkflow } from './service.js';

/** Workers LISTEN here: an execution became due now (started, resumed). */
export const WORKFLOW_CHANNEL = 'pigeon_workflow_due';

export interface ExecutionRow {
  id: string;
  project_id: string;
  workflow_id: string;
  contact_id: string;
  status: ExecutionStatus;
  current_step_id: string | null;
  wake_at: Date | null;
  wait_event: string | null;
  waiting_since: Date | null;
  resume_branch: 'event' | null;
  context: ExecutionContext;
  trigger_event_id: string | null;
  exit_reason: string | null;
  started_at: Date;
  completed_at: Date | null;
  updated_at: Date;
}

/** What steps can read: the last event seen (trigger, then each awaited one) and the start context. */
export interface ExecutionContext {
  event?: Record<string, unknown>;
  eventName?: string;
  eventId?: string;
  workflow?: Record<string, unknown>;
}

export const toExecutionDto = (row: ExecutionRow): Execution => ({
  id: row.id,
  workflowId: row.workflow_id,
  contactId: row.contact_id,
  status: row.status,
  currentStepId: row.current_step_id,
  waitingFor: row.status === 'WAITING' ? row.wait_event : null,
  nextRunAt: row.status === 'RUNNING' || row.status === 'WAITING' ? (row.wake_at?.toISOString() ?? null) : null,
  exitReason: row.exit_reason,
  context: row.context as Record<string, unknown>,
  startedAt: row.started_at.toISOString(),
  completedAt: row.completed_at?.toISOString() ?? null,
  updatedAt: row.updated_at.toISOString(),
});

/** The entry step of a workflow, as SQL over a workflow id: the one step no transition leads to. */
const entryStepOf = (workflowId: Sql) => sql`(SELECT s.id FROM workflow_steps s WHERE s.workflow_id = ${workflowId}
    AND NOT EXISTS (SELECT 1 FROM workflow_transitions t WHERE t.to_step_id = s.id) ORDER BY s.created_at LIMIT 1)`;

/**
 * Whether the contact may enter (DESIGN.md §3): without re-entry never again; with it, once the
 * previous execution is finished. The partial unique index on active executions backs this up.
 */
const mayEnter = (workflowId: Sql, contactId: Sql, allowReentry: Sql) => sql`NOT EXISTS (
    SELECT 1 FROM workflow_executions x WHERE x.workflow_id = ${workflowId} AND x.contact_id = ${contactId}
      AND (NOT ${allowReentry} OR x.status IN ('RUNNING', 'WAITING')))`;

/**
 * The feed batch's events, read by primary key first: left to itself the planner may walk the
 * project's events by name and filter thousands of rows to find a batch of five.
 */
const batchEvents = (projectId: string, eventIds: string[]) =>
  sql`SELECT id, contact_id, name, data, created_at FROM events
      WHERE id = ANY(${eventIds}::uuid[]) AND project_id = ${projectId}::uuid`;

/**
 * Starts executions of the project's enabled workflows whose trigger is one of `eventIds`
 * (the change feed's batch), at most one per (workflow, contact) per batch, by the re-entry rule.
 * One statement; the trigger event's data becomes the execution's `event` context.
 */
export async function startFromEvents(db: Queryable, projectId: string, eventIds: string[]): Promise<number> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`WITH batch AS MATERIALIZED (${batchEvents(projectId, eventIds)}),
        candidates AS (
          SELECT DISTINCT ON (w.id, e.contact_id) w.id AS workflow_id, w.allow_reentry, e.contact_id, e.id AS event_id,
                 e.name, e.data
          FROM batch e
          JOIN workflows w ON w.project_id = ${projectId}::uuid AND w.enabled AND w.trigger_event = e.name
          JOIN contacts ct ON ct.id = e.contact_id
          -- Mail a WEBHOOK inbound route took goes to webhook endpoints, not workflows (modules/inbound-routes).
          WHERE NOT (e.name = 'email.received' AND e.data->>'action' = 'WEBHOOK')
          ORDER BY w.id, e.contact_id, e.created_at, e.id
        )
        INSERT INTO workflow_executions (id, project_id, workflow_id, contact_id, status, current_step_id, wake_at, context, trigger_event_id)
        SELECT uuidv7_compat(), ${projectId}::uuid, c.workflow_id, c.contact_id, 'RUNNING', ${entryStepOf(raw('c.workflow_id'))}, now(),
               jsonb_build_object('event', c.data, 'eventName', c.name, 'eventId', c.event_id, 'workflow', '{}'::jsonb), c.event_id
        FROM candidates c
        WHERE ${mayEnter(raw('c.workflow_id'), raw('c.contact_id'), raw('c.allow_reentry'))}
        ON CONFLICT DO NOTHING
        RETURNING id`,
  );
  return rows.length;
}

/**
 * Resumes executions WAITING for one of these events (recorded after the wait began): the event's
 * data replaces the context's `event`, and the runner follows the WAIT_FOR_EVENT's `event` branch.
 */
export async function resumeWaiting(db: Queryable, projectId: string, eventIds: string[]): Promise<number> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`WITH batch AS MATERIALIZED (${batchEvents(projectId, eventIds)})
        UPDATE workflow_executions x
        SET status = 'RUNNING', wake_at = now(), resume_branch = 'event', wait_event = NULL, updated_at = now(),
            context = x.context || jsonb_build_object('event', e.data, 'eventName', e.name, 'eventId', e.id)
        FROM (SELECT DISTINCT ON (contact_id, name) id, contact_id, name, data, created_at FROM batch
              ORDER BY contact_id, name, created_at, id) e
        WHERE x.project_id = ${projectId}::uuid AND x.status = 'WAITING' AND x.wait_event = e.name
          AND x.contact_id = e.contact_id AND e.created_at >= x.waiting_since
        RETURNING x.id`,
  );
  return rows.length;
}

/** POST /workflows/:id/executions: a manual start (the workflow may be disabled, so it can be tried). */
export async function startExecution(
  db: Queryable,
  projectId: string,
  workflowId: string,
  input: { contactId: string; context?: Record<string, unknown> },
) {
  const workflow = await findWorkflow(db, projectId, workflowId);
  await findInProject(db, 'contacts', projectId, input.contactId, 'Contact');
  const graph = await loadGraph(db, workflow.id);
  const problems = await graphProblems(db, projectId, graph);
  if (problems.length > 0) {
    throw new AppError('unprocessable', 'VALIDATION_ERROR', `The workflow cannot run: ${problems[0]}`, {
      errors: problems.map((message) => ({ field: 'workflow', message, code: 'invalid_workflow' })),
    });
  }
  const context = { workflow: input.context ?? {} };
  const rows = await queryRows<ExecutionRow>(
    db,
    sql`WITH started AS (
          INSERT INTO workflow_executions (id, project_id, workflow_id, contact_id, status, current_step_id, wake_at, context)
          SELECT ${uuidv7()}, ${projectId}::uuid, ${workflow.id}::uuid, ${input.contactId}::uuid, 'RUNNING',
                 ${entryStep(graph)?.id}::uuid, now(), ${JSON.stringify(context)}::jsonb
          WHERE ${mayEnter(sql`${workflow.id}::uuid`, sql`${input.contactId}::uuid`, sql`${workflow.allow_reentry}`)}
          ON CONFLICT DO NOTHING RETURNING *
        ), notified AS (SELECT pg_notify(${WORKFLOW_CHANNEL}, '') FROM started)
        SELECT * FROM started, (SELECT count(*) FROM notified) n`,
  );
  const row = rows[0];
  if (!row) {
    throw conflict(
      workflow.allow_reentry
        ? 'The contact is already in this workflow (an execution is running or waiting)'
        : 'The contact has already been through this workflow and it does not allow re-entry',
      { suggestion: workflow.allow_reentry ? undefined : `PATCH /workflows/${workflow.id} {"allowReentry": true}` },
    );
  }
  return toExecutionDto(row);
}

export async function findExecution(db: Queryable, projectId: string, workflowId: string, id: string) {
  await findWorkflow(db, projectId, workflowId);
  const [row] = isUuid(id)
    ? await queryRows<ExecutionRow>(
        db,
        sql`SELECT * FROM workflow_executions WHERE workflow_id = ${workflowId}::uuid AND id = ${id}::uuid`,
      )
    : [];
  if (!row) throw notFound('Execution');
  return row;
}

interface StepRunRow {
  id: string;
  step_id: string | null;
  step_type: WorkflowStepType;
  step_name: string;
  status: StepRunStatus;
  output: Record<string, unknown> | null;
  error: string | null;
  attempts: number;
  started_at: Date;
  finished_at: Date | null;
}

/** GET /workflows/:id/executions/:executionId. */
export async function getExecution(db: Queryable, projectId: string, workflowId: string, id: string) {
  return executionDetail(db, await findExecution(db, projectId, workflowId, id));
}

export async function executionDetail(db: Queryable, row: ExecutionRow) {
  const runs = await queryRows<StepRunRow>(
    db,
    sql`SELECT * FROM workflow_step_runs WHERE execution_id = ${row.id}::uuid ORDER BY started_at, id`,
  );
  return {
    ...toExecutionDto(row),
    steps: runs.map((r) => ({
      id: r.id,
      stepId: r.step_id,
      stepType: r.step_type as never,
      stepName: r.step_name,
      status: r.status as never,
      output: r.output,
      error: r.error,
      attempts: r.attempts,
      startedAt: r.started_at.toISOString(),
      finishedAt: r.finished_at?.toISOString() ?? null,
    })),
  };
}

export async function listExecutions(
  db: Queryable,
  projectId: string,
  workflowId: string,
  q: z.output<typeof ExecutionListQuery>,
) {
  await findWorkflow(db, projectId, workflowId);
  const after = q.cursor ? decodeCursor(q.cursor) : undefined;
  const filters = [
    sql`workflow_id = ${workflowId}::uuid`,
    q.status ? sql`status = ${q.status}` : raw('true'),
    q.contactId ? sql`contact_id = ${q.contactId}::uuid` : raw('true'),
  ];
  const where = sql`${filters[0]} AND ${filters[1]} AND ${filters[2]}`;
  const page = after ? sql` AND id < ${after.id}::uuid` : raw('');
  const rows = await queryRows<ExecutionRow>(
    db,
    sql`SELECT * FROM workflow_executions WHERE ${where}${page} ORDER BY id DESC LIMIT ${q.limit + 1}`,
  );
  const hasMore = rows.length > q.limit;
  const data = rows.slice(0, q.limit);
  const last = data.at(-1);
  const [count] = q.cursor
    ? [{ n: 0 }]
    : await queryRows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM workflow_executions WHERE ${where}`);
  return {
    data: data.map(toExecutionDto),
    cursor: hasMore && last ? encodeCursor({ v: '', id: last.id }) : null,
    hasMore,
    total: count?.n ?? 0,
  };
}

/**
 * Cancels RUNNING or WAITING executions: the timer is part of the row, so it goes in the same
 * update; an open step record (a wait, a webhook being retried) is closed as CANCELLED. A runner
 * holding the execution finishes its transaction first (row lock) and then finds it cancelled.
 */
async function cancelWhere(db: Queryable, where: Sql): Promise<ExecutionRow[]> {
  return queryRows<ExecutionRow>(
    db,
    sql`WITH cancelled AS (
          UPDATE workflow_executions SET status = 'CANCELLED', wake_at = NULL, wait_event = NULL, resume_branch = NULL,
                 exit_reason = 'cancelled', completed_at = now(), updated_at = now()
          WHERE ${where} AND status IN ('RUNNING', 'WAITING') RETURNING *
        ), closed AS (
          UPDATE workflow_step_runs r SET status = 'CANCELLED', finished_at = now()
          FROM cancelled c WHERE r.execution_id = c.id AND r.finished_at IS NULL
        )
        SELECT * FROM cancelled`,
  );
}

export async function cancelExecution(pool: pg.Pool, projectId: string, workflowId: string, id: string) {
  return inTransaction(pool, async (client) => {
    const row = await findExecution(client, projectId, workflowId, id);
    const [cancelled] = await cancelWhere(client, sql`id = ${row.id}::uuid`);
    if (!cancelled)
      throw conflict(`The execution is ${row.status}; only RUNNING or WAITING executions can be cancelled`);
    return toExecutionDto(cancelled);
  });
}

export async function cancelAllExecutions(db: Queryable, projectId: string, workflowId: string) {
  await findWorkflow(db, projectId, workflowId);
  const rows = await cancelWhere(db, sql`workflow_id = ${workflowId}::uuid`);
  return { cancelled: rows.length };
}

/** Waiting executions' next steps, soonest first (GET /activity/upcoming). */
export async function upcomingSteps(db: Queryable, projectId: string, limit: number) {
  const rows = await queryRows<{
    id: string;
    workflow_id: string;
    contact_id: string;
    wake_at: Date;
    workflow_name: string;
    step_id: string;
    step_name: string;
    step_type: WorkflowStepType;
  }>(
    db,
    sql`SELECT x.id, x.workflow_id, x.contact_id, x.wake_at, w.name AS workflow_name, s.id AS step_id,
               s.name AS step_name, s.type AS step_type
        FROM workflow_executions x JOIN workflows w ON w.id = x.workflow_id JOIN workflow_steps s ON s.id = x.current_step_id
        WHERE x.project_id = ${projectId}::uuid AND x.status = 'WAITING' AND x.wake_at IS NOT NULL
        ORDER BY x.wake_at, x.id LIMIT ${limit}`,
  );
  return rows.map((r) => ({
    type: 'workflow' as const,
    id: r.id,
    name: r.workflow_name,
    scheduledFor: r.wake_at.toISOString(),
    workflowId: r.workflow_id,
    contactId: r.contact_id,
    step: { id: r.step_id, name: r.step_name, type: r.step_type },
  }));
}

/** Executions not finished, and timers fallen due over a minute ago and not yet taken (a stuck runner). */
export async function executionStats(
  db: Queryable,
): Promise<{ running: number; waiting: number; overdueTimers: number }> {
  const [row] = await queryRows<{ running: number; waiting: number; overdue: number }>(
    db,
    sql`SELECT count(*) FILTER (WHERE status = 'RUNNING')::int AS running,
               count(*) FILTER (WHERE status = 'WAITING')::int AS waiting,
               count(*) FILTER (WHERE wake_at < now() - interval '1 minute')::int AS overdue
        FROM workflow_executions WHERE status IN ('RUNNING', 'WAITING')`,
  );
  return { running: row?.running ?? 0, waiting: row?.waiting ?? 0, overdueTimers: row?.overdue ?? 0 };
}
