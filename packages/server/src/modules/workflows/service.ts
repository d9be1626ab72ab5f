import type {
  StepCreate,
  StepUpdate,
  TransitionCreate,
  WorkflowCreate,
  WorkflowStepType,
  WorkflowUpdate,
} from '@pigeon/contract';
import { STEP_CONFIGS } from '@pigeon/contract';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import type { z } from 'zod';
import { queryRows, sql } from '../../db/query.js';
import { findInProject, isUuid } from '../../db/scoped.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import { AppError, badRequest, conflict, notFound, validationFailed } from '../../kit/errors.js';
import { checkCondition, refsOf } from '../conditions/public.js';
import { dropRefs, type Ref, saveRefs } from '../references/public.js';
import { requireTopic } from '../topics/public.js';
import {
  BRANCHES,
  conditionOf,
  type Graph,
  graphProblems,
  loadGraph,
  type StepRow,
  type TransitionRow,
  toStepDto,
  toTransitionDto,
  toWorkflowDto,
  type WorkflowRow,
} from './graph.js';

const ACTIVE = sql`status IN ('RUNNING', 'WAITING')`;

export const findWorkflow = (db: Queryable, projectId: string, id: string) =>
  findInProject<WorkflowRow>(db, 'workflows', projectId, id, 'Workflow');

async function executionCounts(db: Queryable, ids: string[]) {
  const rows = await queryRows<{ workflow_id: string; active: number; total: number }>(
    db,
    sql`SELECT workflow_id, count(*) FILTER (WHERE ${ACTIVE})::int AS active, count(*)::int AS total
        FROM workflow_executions WHERE workflow_id = ANY(${ids}::uuid[]) GROUP BY workflow_id`,
  );
  return new Map(rows.map((r) => [r.workflow_id, { active: r.active, total: r.total }]));
}

/** GET /workflows/:id: the workflow with its steps and transitions. */
export async function getWorkflow(db: Queryable, projectId: string, id: string) {
  return workflowDetail(db, await findWorkflow(db, projectId, id));
}

export async function workflowDetail(db: Queryable, row: WorkflowRow) {
  const graph = await loadGraph(db, row.id);
  const counts = await executionCounts(db, [row.id]);
  return {
    ...toWorkflowDto(row, counts.get(row.id)),
    steps: [...graph.steps.values()].map(toStepDto),
    transitions: graph.transitions.map(toTransitionDto),
  };
}

export async function listWorkflows(db: Queryable, projectId: string) {
  const rows = await queryRows<WorkflowRow>(
    db,
    sql`SELECT * FROM workflows WHERE project_id = ${projectId}::uuid ORDER BY created_at DESC, id DESC`,
  );
  const counts = await executionCounts(
    db,
    rows.map((r) => r.id),
  );
  return { data: rows.map((r) => toWorkflowDto(r, counts.get(r.id))) };
}

export async function createWorkflow(pool: pg.Pool, projectId: string, input: z.output<typeof WorkflowCreate>) {
  if (input.enabled) {
    throw badRequest('Workflows are created disabled: add steps, then enable it with PATCH /workflows/:id');
  }
  return inTransaction(pool, async (client) => {
    const [row] = await queryRows<WorkflowRow>(
      client,
      sql`INSERT INTO workflows (id, project_id, name, description, trigger_event, allow_reentry)
          VALUES (${uuidv7()}, ${projectId}::uuid, ${input.name}, ${input.description ?? null},
                  ${input.triggerConfig.eventName}, ${input.allowReentry}) RETURNING *`,
    );
    const workflow = row as WorkflowRow;
    await saveWorkflowRefs(client, workflow, { steps: new Map(), transitions: [] });
    return workflowDetail(client, workflow);
  });
}

export async function updateWorkflow(
  pool: pg.Pool,
  projectId: string,
  id: string,
  input: z.output<typeof WorkflowUpdate>,
) {
  return inTransaction(pool, async (client) => {
    const current = await lockWorkflow(client, projectId, id);
    if (input.enabled && !current.enabled) await requireRunnable(client, current);
    const [row] = await queryRows<WorkflowRow>(
      client,
      sql`UPDATE workflows SET name = ${input.name ?? current.name},
            description = ${input.description === undefined ? current.description : input.description},
            trigger_event = ${input.triggerConfig?.eventName ?? current.trigger_event},
            enabled = ${input.enabled ?? current.enabled},
            allow_reentry = ${input.allowReentry ?? current.allow_reentry},
            updated_at = now()
          WHERE id = ${id}::uuid RETURNING *`,
    );
    const workflow = row as WorkflowRow;
    await saveWorkflowRefs(client, workflow, await loadGraph(client, id));
    return workflowDetail(client, workflow);
  });
}

/** Enabling needs a graph that can run: 422 naming every problem. */
async function requireRunnable(db: Queryable, workflow: WorkflowRow) {
  const problems = await graphProblems(db, workflow.project_id, await loadGraph(db, workflow.id));
  if (problems.length > 0) {
    throw new AppError('unprocessable', 'VALIDATION_ERROR', `The workflow cannot be enabled: ${problems[0]}`, {
      errors: problems.map((message) => ({ field: 'enabled', message, code: 'invalid_workflow' })),
    });
  }
}

export async function deleteWorkflow(pool: pg.Pool, projectId: string, id: string) {
  await inTransaction(pool, async (client) => {
    await lockWorkflow(client, projectId, id);
    const [active] = await queryRows<{ n: number }>(
      client,
      sql`SELECT count(*)::int AS n FROM workflow_executions WHERE workflow_id = ${id}::uuid AND ${ACTIVE}`,
    );
    if ((active?.n ?? 0) > 0) {
      throw conflict(`The workflow has ${active?.n} running or waiting executions: cancel them first`, {
        details: { activeExecutions: active?.n },
        suggestion: `POST /workflows/${id}/executions/cancel-all`,
      });
    }
    await queryRows(client, sql`DELETE FROM workflows WHERE id = ${id}::uuid`);
    await dropRefs(client, { type: 'workflow', id });
  });
}

/** Graph edits take the workflow's row lock and bump its version (runners cache graphs by version). */
async function lockWorkflow(client: Queryable, projectId: string, id: string): Promise<WorkflowRow> {
  const [row] = isUuid(id)
    ? await queryRows<WorkflowRow>(
        client,
        sql`SELECT * FROM workflows WHERE project_id = ${projectId}::uuid AND id = ${id}::uuid FOR UPDATE`,
      )
    : [];
  if (!row) throw notFound('Workflow');
  return row;
}

async function graphChanged(client: Queryable, workflow: WorkflowRow) {
  const graph = await loadGraph(client, workflow.id);
  // An enabled workflow must stay runnable through every edit.
  if (workflow.enabled) await requireRunnable(client, workflow);
  await queryRows(
    client,
    sql`UPDATE workflows SET version = version + 1, updated_at = now() WHERE id = ${workflow.id}::uuid`,
  );
  await saveWorkflowRefs(client, workflow, graph);
}

/** Steps' config checked against their type; CONDITION trees by the condition engine (400 naming the path). */
async function checkConfig(db: Queryable, projectId: string, type: WorkflowStepType, config: unknown) {
  const parsed = STEP_CONFIGS[type].safeParse(config);
  if (!parsed.success) {
    throw validationFailed(
      parsed.error.issues.map((issue) => ({
        field: ['config', ...issue.path].join('.'),
        message: issue.message,
        code: issue.code,
      })),
      `Invalid ${type} config`,
    );
  }
  const value = parsed.data as Record<string, unknown>;
  if (type === 'CONDITION') {
    await checkCondition(db, projectId, conditionOf(value), {
      workflow: true,
      prefix: value.condition ? 'config.condition' : 'config',
    });
  }
  if (type === 'SEND_EMAIL') {
    await findInProject(db, 'templates', projectId, String(value.templateId), 'Template').catch(() => {
      throw badRequest(`config.templateId: template ${value.templateId} does not exist in this project`);
    });
    if (value.topicId) await requireTopic(db, projectId, String(value.topicId), 'config.topicId');
  }
  if (type === 'WEBHOOK' && !/^https?:\/\//i.test(String(value.url))) {
    throw validationFailed([{ field: 'config.url', message: 'must be an http(s) URL', code: 'invalid_string' }]);
  }
  return value;
}

export async function addStep(
  pool: pg.Pool,
  projectId: string,
  workflowId: string,
  input: z.output<typeof StepCreate>,
) {
  return inTransaction(pool, async (client) => {
    const workflow = await lockWorkflow(client, projectId, workflowId);
    const config = await checkConfig(client, projectId, input.type, input.config);
    const [row] = await queryRows<StepRow>(
      client,
      sql`INSERT INTO workflow_steps (id, workflow_id, project_id, type, name, position, config, template_id)
          VALUES (${uuidv7()}, ${workflowId}::uuid, ${projectId}::uuid, ${input.type}, ${input.name ?? defaultName(input.type)},
                  ${JSON.stringify(input.position ?? { x: 0, y: 0 })}::jsonb, ${JSON.stringify(config)}::jsonb,
                  ${input.type === 'SEND_EMAIL' ? String(config.templateId) : null}::uuid)
          RETURNING *`,
    );
    await graphChanged(client, workflow);
    return toStepDto(row as StepRow);
  });
}

const defaultName = (type: WorkflowStepType) =>
  type
    .toLowerCase()
    .split('_')
    .map((w, i) => (i === 0 ? w[0]?.toUpperCase() + w.slice(1) : w))
    .join(' ');

async function findStep(db: Queryable, workflowId: string, stepId: string): Promise<StepRow> {
  const [row] = await queryRows<StepRow>(
    db,
    sql`SELECT * FROM workflow_steps WHERE workflow_id = ${workflowId}::uuid AND id = ${stepId}::uuid`,
  );
  if (!row) throw notFound('Step');
  return row;
}

export async function updateStep(
  pool: pg.Pool,
  projectId: string,
  workflowId: string,
  stepId: string,
  input: z.output<typeof StepUpdate>,
) {
  return inTransaction(pool, async (client) => {
    const workflow = await lockWorkflow(client, projectId, workflowId);
    const step = await findStep(client, workflowId, stepId);
    const config = input.config ? await checkConfig(client, projectId, step.type, input.config) : step.config;
    const [row] = await queryRows<StepRow>(
      client,
      sql`UPDATE workflow_steps SET name = ${input.name ?? step.name},
            position = ${JSON.stringify(input.position ?? step.position)}::jsonb,
            config = ${JSON.stringify(config)}::jsonb,
            template_id = ${step.type === 'SEND_EMAIL' ? String(config.templateId) : null}::uuid,
            updated_at = now()
          WHERE id = ${stepId}::uuid RETURNING *`,
    );
    await graphChanged(client, workflow);
    return toStepDto(row as StepRow);
  });
}

/**
 * Deletes a step (its transitions go with it). With `splice`, each transition that led to it is
 * re-pointed at the step's plain successor, so a chain stays connected. A step where executions
 * are waiting or running cannot be deleted (409).
 */
export async function deleteStep(
  pool: pg.Pool,
  projectId: string,
  workflowId: string,
  stepId: string,
  splice: boolean,
) {
  await inTransaction(pool, async (client) => {
    const workflow = await lockWorkflow(client, projectId, workflowId);
    const step = await findStep(client, workflowId, stepId);
    const [busy] = await queryRows<{ n: number }>(
      client,
      sql`SELECT count(*)::int AS n FROM workflow_executions WHERE current_step_id = ${stepId}::uuid AND ${ACTIVE}`,
    );
    if ((busy?.n ?? 0) > 0) {
      throw conflict(`${busy?.n} executions are at step "${step.name}": cancel them or wait until they move on`);
    }
    if (splice) {
      const graph = await loadGraph(client, workflowId);
      const out = graph.transitions.filter((t) => t.from_step_id === stepId);
      const successor = out.length === 1 ? out[0]?.to_step_id : undefined;
      if (out.length > 1) {
        throw conflict(`Step "${step.name}" has ${out.length} ways out; splice needs exactly one`);
      }
      if (successor) {
        await queryRows(
          client,
          sql`UPDATE workflow_transitions SET to_step_id = ${successor}::uuid
              WHERE to_step_id = ${stepId}::uuid AND from_step_id <> ${successor}::uuid`,
        );
      }
    }
    await queryRows(client, sql`DELETE FROM workflow_steps WHERE id = ${stepId}::uuid`);
    await graphChanged(client, workflow);
  });
}

export async function addTransition(
  pool: pg.Pool,
  projectId: string,
  workflowId: string,
  input: z.output<typeof TransitionCreate>,
) {
  return inTransaction(pool, async (client) => {
    const workflow = await lockWorkflow(client, projectId, workflowId);
    const from = await findStep(client, workflowId, input.fromStepId).catch(() => {
      throw badRequest(`fromStepId: step ${input.fromStepId} is not in this workflow`);
    });
    await findStep(client, workflowId, input.toStepId).catch(() => {
      throw badRequest(`toStepId: step ${input.toStepId} is not in this workflow`);
    });
    if (input.fromStepId === input.toStepId) throw badRequest('A step cannot lead to itself');
    const branch = input.branch ?? null;
    const allowed = BRANCHES[from.type];
    if (!allowed.includes(branch ?? '')) {
      const ways = allowed.map((b) => (b === '' ? 'no branch' : `"${b}"`)).join(' or ');
      throw badRequest(
        allowed.length === 0
          ? `A ${from.type} step ends the execution: nothing can follow it`
          : `branch: a transition out of a ${from.type} step takes ${ways}`,
      );
    }
    const rows = await queryRows<TransitionRow>(
      client,
      sql`INSERT INTO workflow_transitions (id, workflow_id, from_step_id, to_step_id, branch)
          VALUES (${uuidv7()}, ${workflowId}::uuid, ${input.fromStepId}::uuid, ${input.toStepId}::uuid, ${branch})
          ON CONFLICT DO NOTHING RETURNING *`,
    );
    if (!rows[0]) {
      throw conflict(
        `Step "${from.name}" already has a ${branch ? `"${branch}"` : 'plain'} transition; delete it first`,
      );
    }
    await graphChanged(client, workflow);
    return toTransitionDto(rows[0]);
  });
}

export async function deleteTransition(pool: pg.Pool, projectId: string, workflowId: string, transitionId: string) {
  await inTransaction(pool, async (client) => {
    const workflow = await lockWorkflow(client, projectId, workflowId);
    const rows = await queryRows(
      client,
      sql`DELETE FROM workflow_transitions WHERE workflow_id = ${workflowId}::uuid AND id = ${transitionId}::uuid RETURNING id`,
    );
    if (rows.length === 0) throw notFound('Transition');
    await graphChanged(client, workflow);
  });
}

/** The reference index: the trigger and awaited events, CONDITION fields and segments, sent templates. */
async function saveWorkflowRefs(db: Queryable, workflow: WorkflowRow, graph: Graph) {
  const refs: Ref[] = [{ type: 'event', key: workflow.trigger_event }];
  for (const step of graph.steps.values()) {
    if (step.type === 'WAIT_FOR_EVENT') refs.push({ type: 'event', key: String(step.config.eventName) });
    if (step.type === 'SEND_EMAIL') refs.push({ type: 'template', key: String(step.config.templateId) });
    if (step.type === 'SEND_EMAIL' && step.config.topicId)
      refs.push({ type: 'topic', key: String(step.config.topicId) });
    if (step.type === 'CONDITION') {
      const checked = await checkCondition(db, workflow.project_id, conditionOf(step.config), { workflow: true });
      refs.push(...refsOf(checked.refs));
    }
  }
  await saveRefs(db, workflow.project_id, { type: 'workflow', id: workflow.id }, refs);
}
