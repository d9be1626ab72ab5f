import {
  type ExecutionStatus,
  PigeonError,
  type StepRunStatus,
  type TransitionBranch,
  type WorkflowStep,
  type WorkflowStepType,
  type WorkflowTransition,
} from '@pigeon/sdk';

/** What the workflow pages share besides the graph itself (kept out of React Flow's chunk). */

export const STEP_TYPES: ReadonlyArray<[WorkflowStepType, string, string]> = [
  ['SEND_EMAIL', 'Send email', 'Send a template to the contact (or a fixed address)'],
  ['DELAY', 'Delay', 'Wait a fixed time'],
  ['WAIT_FOR_EVENT', 'Wait for event', 'Wait until the contact does something, or a timeout'],
  ['CONDITION', 'Condition', 'Go one way (yes) or the other (no)'],
  ['WEBHOOK', 'Webhook', 'Call a URL of yours'],
  ['UPDATE_CONTACT', 'Update contact', 'Set data or change the subscription'],
  ['EXIT', 'Exit', 'End the execution here'],
];
export const typeLabel = (type: WorkflowStepType) => STEP_TYPES.find(([t]) => t === type)?.[1] ?? type;

/** The ways out of a step of each type (`null`: the plain transition), as the API allows them. */
export const BRANCHES: Record<WorkflowStepType, ReadonlyArray<TransitionBranch | null>> = {
  CONDITION: ['yes', 'no'],
  WAIT_FOR_EVENT: [null, 'event', 'timeout'],
  EXIT: [],
  SEND_EMAIL: [null],
  DELAY: [null],
  WEBHOOK: [null],
  UPDATE_CONTACT: [null],
};
export const branchLabel = (branch: TransitionBranch | null) =>
  branch === null ? 'next' : branch === 'event' ? 'on event' : branch === 'timeout' ? 'on timeout' : branch;

const plural = (n: number, unit: string) => `${n} ${n === 1 ? unit.replace(/s$/, '') : unit}`;

/** Seconds as the largest whole unit ("2 days", "90 seconds"). */
export function duration(seconds: number): string {
  for (const [unit, size] of [
    ['days', 86_400],
    ['hours', 3_600],
    ['minutes', 60],
  ] as const)
    if (seconds % size === 0) return plural(seconds / size, unit);
  return plural(seconds, 'seconds');
}

/** One line saying what a step does, for the graph. */
export function stepSummary(step: WorkflowStep, templateName: (id: string) => string | undefined): string {
  const c = step.config as Record<string, unknown>;
  switch (step.type) {
    case 'SEND_EMAIL': {
      const recipient = c.recipient as { type?: string; customEmail?: string } | undefined;
      const template = templateName(String(c.templateId)) ?? 'a template';
      return recipient?.type === 'CUSTOM' ? `${template} to ${recipient.customEmail}` : template;
    }
    case 'DELAY':
      return `Wait ${plural(Number(c.amount), String(c.unit))}`;
    case 'WAIT_FOR_EVENT':
      return `Until “${c.eventName}”${typeof c.timeout === 'number' ? `, at most ${duration(c.timeout)}` : ''}`;
    case 'CONDITION': {
      const tree = c.condition as { groups?: Array<{ filters?: unknown[] }> } | undefined;
      if (!tree) return `${c.field} ${c.operator}${c.value === undefined ? '' : ` ${JSON.stringify(c.value)}`}`;
      const filters = (tree.groups ?? []).reduce((n, g) => n + (g.filters?.length ?? 0), 0);
      return plural(filters, 'filters');
    }
    case 'WEBHOOK':
      return `${c.method ?? 'POST'} ${c.url}`;
    case 'UPDATE_CONTACT': {
      const keys = Object.keys((c.updates as object | undefined) ?? {});
      const action = c.subscriptionAction && c.subscriptionAction !== 'none' ? [String(c.subscriptionAction)] : [];
      return [...keys, ...action].join(', ') || 'Nothing yet';
    }
    case 'EXIT':
      return c.reason ? String(c.reason) : 'Ends the execution';
  }
}

/**
 * A step's config as its form edits it: a CONDITION of one filter (Plunk's shape, which the API
 * also takes) opens as the condition tree it stands for, for the condition builder.
 */
export function editableConfig(step: WorkflowStep): Record<string, unknown> {
  if (step.type !== 'CONDITION' || 'condition' in step.config) return step.config;
  return { condition: { logic: 'AND', groups: [{ filters: [step.config] }] } };
}

/** The API's reasons a graph cannot run (422 on enable or on an edit of an enabled workflow), by the step each names. */
export interface Problems {
  byStep: Map<string, string[]>;
  general: string[];
}
export const NO_PROBLEMS: Problems = { byStep: new Map(), general: [] };

const STEP_LABEL = /step "((?:[^"\\]|\\.)*)" \([A-Z_]+, ([0-9a-f-]{36})\)/g;

export function problemsOf(error: unknown, steps: WorkflowStep[]): Problems {
  if (!(error instanceof PigeonError) || error.code !== 'VALIDATION_ERROR') return NO_PROBLEMS;
  const graphErrors = (error.errors ?? []).filter((e) => e.code === 'invalid_workflow');
  if (graphErrors.length === 0) return NO_PROBLEMS;
  const byStep = new Map<string, string[]>();
  const general: string[] = [];
  const add = (id: string, text: string) => byStep.set(id, [...(byStep.get(id) ?? []), text]);
  for (const { message } of graphErrors) {
    const ids = [...message.matchAll(STEP_LABEL)]
      .map((m) => m[2] as string)
      .filter((id) => steps.some((s) => s.id === id));
    // On the step: what is wrong with it, without naming it again.
    const own = message.match(/^step "(?:[^"\\]|\\.)*" \([A-Z_]+, [0-9a-f-]{36}\) (.*)$/)?.[1];
    const short = message.replace(STEP_LABEL, 'step “$1”');
    const cycle = /^A cycle without a DELAY or WAIT_FOR_EVENT: (.*)$/.exec(message)?.[1];
    if (cycle) {
      const names = new Set(cycle.split(' → '));
      for (const s of steps) if (names.has(s.name)) ids.push(s.id);
    }
    for (const id of new Set(ids)) add(id, own ?? short);
    if (ids.length === 0) general.push(short);
  }
  return { byStep, general };
}

/** Chip tones of execution and step run statuses (the kit's chip colours). */
export function statusTone(status: ExecutionStatus | StepRunStatus): string {
  if (status === 'COMPLETED') return 'ok';
  if (status === 'FAILED') return 'bad';
  if (status === 'RUNNING' || status === 'WAITING') return 'warn';
  return 'plain';
}
export const isActive = (status: ExecutionStatus) => status === 'RUNNING' || status === 'WAITING';

/**
 * Positions for a graph that reads top to bottom: each step one row below the furthest step that
 * leads to it (back edges of loops ignored), siblings side by side in branch order (yes, then no),
 * each row centred under the steps above it. Steps nothing leads to start the first row.
 */
export function layout(
  steps: WorkflowStep[],
  transitions: WorkflowTransition[],
  size: { width: number; height: number },
): Map<string, { x: number; y: number }> {
  const ids = steps.map((s) => s.id);
  const out = new Map<string, WorkflowTransition[]>(ids.map((id) => [id, []]));
  for (const t of transitions) out.get(t.fromStepId)?.push(t);
  const targets = new Set(transitions.map((t) => t.toStepId));
  const roots = ids.filter((id) => !targets.has(id));
  if (roots.length === 0 && ids[0]) roots.push(ids[0]);
  // Depth-first from the roots: forward edges only (an edge to a step on the current path is a loop back).
  const forward: WorkflowTransition[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (id: string) => {
    state.set(id, 'open');
    for (const t of out.get(id) ?? []) {
      if (state.get(t.toStepId) === 'open') continue;
      forward.push(t);
      if (!state.has(t.toStepId)) visit(t.toStepId);
    }
    state.set(id, 'done');
  };
  for (const id of [...roots, ...ids]) if (!state.has(id)) visit(id);
  // Longest path from a root over the forward edges (they form a DAG).
  const depth = new Map(ids.map((id) => [id, 0]));
  for (let changed = true, rounds = 0; changed && rounds <= ids.length; rounds++) {
    changed = false;
    for (const t of forward) {
      const d = (depth.get(t.fromStepId) ?? 0) + 1;
      if (d > (depth.get(t.toStepId) ?? 0)) {
        depth.set(t.toStepId, d);
        changed = true;
      }
    }
  }
  const rows: string[][] = [];
  for (const id of ids) {
    const d = depth.get(id) ?? 0;
    rows[d] = [...(rows[d] ?? []), id];
  }
  const x = new Map<string, number>();
  // Where each branch leaves its step: yes and event on the left, no and timeout on the right.
  const side = (b: TransitionBranch | null) => (b === 'yes' || b === 'event' ? -0.5 : b === null ? 0 : 0.5);
  const parents = new Map<string, Array<{ from: string; rank: number }>>();
  for (const t of forward) {
    parents.set(t.toStepId, [...(parents.get(t.toStepId) ?? []), { from: t.fromStepId, rank: side(t.branch) }]);
  }
  const positions = new Map<string, { x: number; y: number }>();
  rows.forEach((row = [], r) => {
    const wanted = new Map(
      row.map((id) => {
        const ps = (parents.get(id) ?? []).filter((p) => x.has(p.from));
        const at = ps.length
          ? ps.reduce((sum, p) => sum + (x.get(p.from) ?? 0) + p.rank * size.width, 0) / ps.length
          : 0;
        return [id, at];
      }),
    );
    row.sort((a, b) => (wanted.get(a) ?? 0) - (wanted.get(b) ?? 0));
    const centre = row.reduce((sum, id) => sum + (wanted.get(id) ?? 0), 0) / row.length;
    row.forEach((id, i) => {
      const at = centre + (i - (row.length - 1) / 2) * size.width;
      x.set(id, at);
      positions.set(id, { x: at, y: (r + 1) * size.height });
    });
  });
  return positions;
}
