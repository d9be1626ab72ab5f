import type {
  ConditionFilter,
  ConditionTree,
  TransitionBranch,
  Workflow,
  WorkflowStep,
  WorkflowStepType,
  WorkflowTransition,
} from '@pigeon/contract';
import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

export interface WorkflowRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  trigger_type: 'EVENT';
  trigger_event: string;
  enabled: boolean;
  allow_reentry: boolean;
  version: number;
  created_at: Date;
  updated_at: Date;
}

export interface StepRow {
  id: string;
  workflow_id: string;
  project_id: string;
  type: WorkflowStepType;
  name: string;
  position: { x: number; y: number };
  config: Record<string, unknown>;
  template_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface TransitionRow {
  id: string;
  workflow_id: string;
  from_step_id: string;
  to_step_id: string;
  branch: TransitionBranch | null;
  created_at: Date;
}

export interface Graph {
  steps: Map<string, StepRow>;
  transitions: TransitionRow[];
}

export const toWorkflowDto = (row: WorkflowRow, executions = { active: 0, total: 0 }): Workflow => ({
  id: row.id,
  name: row.name,
  description: row.description,
  triggerType: row.trigger_type,
  triggerConfig: { eventName: row.trigger_event },
  enabled: row.enabled,
  allowReentry: row.allow_reentry,
  projectId: row.project_id,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  executions,
});

export const toStepDto = (row: StepRow): WorkflowStep => ({
  id: row.id,
  workflowId: row.workflow_id,
  type: row.type,
  name: row.name,
  position: row.position,
  config: row.config,
  templateId: row.template_id,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export const toTransitionDto = (row: TransitionRow): WorkflowTransition => ({
  id: row.id,
  workflowId: row.workflow_id,
  fromStepId: row.from_step_id,
  toStepId: row.to_step_id,
  branch: row.branch,
  createdAt: row.created_at.toISOString(),
});

export async function loadGraph(db: Queryable, workflowId: string): Promise<Graph> {
  const steps = await queryRows<StepRow>(
    db,
    sql`SELECT * FROM workflow_steps WHERE workflow_id = ${workflowId}::uuid ORDER BY created_at, id`,
  );
  const transitions = await queryRows<TransitionRow>(
    db,
    sql`SELECT * FROM workflow_transitions WHERE workflow_id = ${workflowId}::uuid ORDER BY created_at, id`,
  );
  return { steps: new Map(steps.map((s) => [s.id, s])), transitions };
}

/** The step an execution starts at: the one step no transition leads to. */
export function entryStep(graph: Graph): StepRow | undefined {
  const targets = new Set(graph.transitions.map((t) => t.to_step_id));
  const roots = [...graph.steps.values()].filter((s) => !targets.has(s.id));
  return roots.length === 1 ? roots[0] : undefined;
}

/**
 * Where an execution goes after `stepId` finished with `branch`: the transition of that branch,
 * else the plain one (a plain transition out of a WAIT_FOR_EVENT is followed on event and timeout).
 */
export function nextStep(graph: Graph, stepId: string, branch: TransitionBranch | null): string | undefined {
  const out = graph.transitions.filter((t) => t.from_step_id === stepId);
  return (out.find((t) => t.branch === branch) ?? out.find((t) => t.branch === null))?.to_step_id;
}

/** Which branches may leave a step of each type ('' is the plain transition). */
export const BRANCHES: Record<WorkflowStepType, ReadonlyArray<TransitionBranch | ''>> = {
  CONDITION: ['yes', 'no'],
  WAIT_FOR_EVENT: ['', 'event', 'timeout'],
  EXIT: [],
  SEND_EMAIL: [''],
  DELAY: [''],
  WEBHOOK: [''],
  UPDATE_CONTACT: [''],
};

/** Steps where an execution stops until a timer or an event: a cycle needs one of them. */
const PAUSES = new Set<WorkflowStepType>(['DELAY', 'WAIT_FOR_EVENT']);

/**
 * Everything that keeps a graph from running, in words (an empty list: it can be enabled):
 * no steps or more than one entry, unreachable steps, a CONDITION without both branches, a
 * SEND_EMAIL whose template is gone, and a cycle that never pauses.
 */
export async function graphProblems(db: Queryable, projectId: string, graph: Graph): Promise<string[]> {
  const problems: string[] = [];
  const steps = [...graph.steps.values()];
  const label = (s: StepRow) => `step "${s.name}" (${s.type}, ${s.id})`;
  if (steps.length === 0) return ['The workflow has no steps'];
  const entry = entryStep(graph);
  if (!entry) {
    const targets = new Set(graph.transitions.map((t) => t.to_step_id));
    const roots = steps.filter((s) => !targets.has(s.id));
    problems.push(
      roots.length === 0
        ? 'Every step has a transition leading to it, so there is no first step'
        : `Only one step may have no transition leading to it (the first step); these have none: ${roots.map(label).join(', ')}`,
    );
  } else {
    const reached = reachableFrom(graph, entry.id);
    for (const s of steps) if (!reached.has(s.id)) problems.push(`${label(s)} cannot be reached from the first step`);
  }
  for (const s of steps) {
    const out = new Set(graph.transitions.filter((t) => t.from_step_id === s.id).map((t) => t.branch));
    if (s.type === 'CONDITION' && !(out.has('yes') && out.has('no'))) {
      problems.push(`${label(s)} needs both a "yes" and a "no" transition`);
    }
  }
  const templateIds = steps.flatMap((s) => (s.type === 'SEND_EMAIL' ? [String(s.config.templateId)] : []));
  if (templateIds.length > 0) {
    const found = await queryRows<{ id: string }>(
      db,
      sql`SELECT id FROM templates WHERE project_id = ${projectId}::uuid AND id = ANY(${templateIds}::uuid[])`,
    );
    const ids = new Set(found.map((r) => r.id));
    for (const s of steps) {
      if (s.type === 'SEND_EMAIL' && !ids.has(String(s.config.templateId))) {
        problems.push(`${label(s)} sends template ${s.config.templateId}, which does not exist`);
      }
    }
  }
  const loop = cycleWithoutPause(graph);
  if (loop)
    problems.push(
      `A cycle without a DELAY or WAIT_FOR_EVENT: ${loop.map((id) => graph.steps.get(id)?.name).join(' → ')}`,
    );
  return problems;
}

function reachableFrom(graph: Graph, from: string): Set<string> {
  const seen = new Set([from]);
  const stack = [from];
  while (stack.length > 0) {
    const id = stack.pop() as string;
    for (const t of graph.transitions) {
      if (t.from_step_id === id && !seen.has(t.to_step_id)) {
        seen.add(t.to_step_id);
        stack.push(t.to_step_id);
      }
    }
  }
  return seen;
}

/** A cycle through steps that never pause (depth-first search over the non-pausing subgraph). */
function cycleWithoutPause(graph: Graph): string[] | undefined {
  const active = (id: string) => {
    const step = graph.steps.get(id);
    return step !== undefined && !PAUSES.has(step.type);
  };
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | undefined => {
    state.set(id, 'open');
    path.push(id);
    for (const t of graph.transitions) {
      if (t.from_step_id !== id || !active(t.to_step_id)) continue;
      const seen = state.get(t.to_step_id);
      if (seen === 'open') return [...path.slice(path.indexOf(t.to_step_id)), t.to_step_id];
      if (!seen) {
        const found = visit(t.to_step_id);
        if (found) return found;
      }
    }
    path.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const id of graph.steps.keys()) {
    if (active(id) && !state.has(id)) {
      const found = visit(id);
      if (found) return found;
    }
  }
  return undefined;
}

/** A CONDITION step's config as a tree: a full `condition`, or one filter standing for it. */
export function conditionOf(config: Record<string, unknown>): ConditionTree {
  if (config.condition) return config.condition as ConditionTree;
  return { logic: 'AND', groups: [{ filters: [config as unknown as ConditionFilter] }] };
}
