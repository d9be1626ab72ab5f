import type { contract, TransitionBranch, WorkflowStepType } from '@pigeon/contract';
import type { ClientInferRequest } from '@ts-rest/core';
import { api, bodyOf } from './api.js';
import type { TestPigeon } from './helpers.js';

export { until } from './until.js';

type Auth = Record<string, string>;

export interface StepSpec {
  key: string;
  type: WorkflowStepType;
  config?: Record<string, unknown>;
  name?: string;
}

export interface Built {
  id: string;
  steps: Record<string, string>;
}

/**
 * Builds a workflow through the API: steps by key, then transitions `[from, to, branch?]`, and
 * enables it unless told not to. Every call must succeed.
 */
export async function buildWorkflow(
  pigeon: TestPigeon,
  auth: Auth,
  spec: {
    trigger: string;
    steps: StepSpec[];
    transitions: Array<[string, string, TransitionBranch?]>;
    allowReentry?: boolean;
    enable?: boolean;
    name?: string;
  },
): Promise<Built> {
  const workflows = api(pigeon, auth).workflows;
  const created = await workflows.create({
    body: {
      name: spec.name ?? `wf ${spec.trigger}`,
      triggerConfig: { eventName: spec.trigger },
      allowReentry: spec.allowReentry ?? false,
    },
  });
  const { id } = bodyOf(created, 201);
  const params = { id };
  const steps: Record<string, string> = {};
  for (const step of spec.steps) {
    const res = await workflows.addStep({
      params,
      body: { type: step.type, name: step.name ?? step.key, config: step.config ?? {} },
    });
    steps[step.key] = bodyOf(res, 201).id;
  }
  for (const [from, to, branch] of spec.transitions) {
    const res = await workflows.addTransition({
      params,
      body: { fromStepId: steps[from] ?? '', toStepId: steps[to] ?? '', ...(branch ? { branch } : {}) },
    });
    bodyOf(res, 201);
  }
  if (spec.enable !== false) bodyOf(await workflows.update({ params, body: { enabled: true } }), 200);
  return { id, steps };
}

export async function createTemplate(
  pigeon: TestPigeon,
  auth: Auth,
  body: Omit<ClientInferRequest<typeof contract.templates.create>['body'], 'name'> & { name?: string },
) {
  return bodyOf(await api(pigeon, auth).templates.create({ body: { name: 'wf template', ...body } }), 201).id;
}

/** The executions of a workflow (first page, newest first). */
export async function executionsOf(pigeon: TestPigeon, auth: Auth, workflowId: string) {
  const res = await api(pigeon, auth).workflows.listExecutions({ params: { id: workflowId }, query: { limit: 100 } });
  return bodyOf(res, 200).data;
}

export async function executionDetail(pigeon: TestPigeon, auth: Auth, workflowId: string, executionId: string) {
  const res = await api(pigeon, auth).workflows.getExecution({ params: { id: workflowId, executionId } });
  return bodyOf(res, 200);
}

/** Tracks an event for a contact with the secret key. */
export async function track(
  pigeon: TestPigeon,
  auth: Auth,
  email: string,
  event: string,
  data?: Record<string, unknown>,
  subscribed?: boolean,
) {
  const res = await api(pigeon, auth).events.track({
    body: { email, event, ...(data ? { data } : {}), ...(subscribed === undefined ? {} : { subscribed }) },
  });
  return bodyOf(res, 200).data;
}
