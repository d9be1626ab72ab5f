import { expect } from 'vitest';
import type { TestPigeon } from './helpers.js';

export { until } from './until.js';

type Auth = Record<string, string>;

export interface StepSpec {
  key: string;
  type: string;
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
    transitions: Array<[string, string, string?]>;
    allowReentry?: boolean;
    enable?: boolean;
    name?: string;
  },
): Promise<Built> {
  const created = await pigeon.request('POST', '/workflows', {
    headers: auth,
    body: {
      name: spec.name ?? `wf ${spec.trigger}`,
      triggerConfig: { eventName: spec.trigger },
      allowReentry: spec.allowReentry ?? false,
    },
  });
  expect(created.status, created.text).toBe(201);
  const id = created.body.id as string;
  const steps: Record<string, string> = {};
  for (const step of spec.steps) {
    const res = await pigeon.request('POST', `/workflows/${id}/steps`, {
      headers: auth,
      body: { type: step.type, name: step.name ?? step.key, config: step.config ?? {} },
    });
    expect(res.status, res.text).toBe(201);
    steps[step.key] = res.body.id;
  }
  for (const [from, to, branch] of spec.transitions) {
    const res = await pigeon.request('POST', `/workflows/${id}/transitions`, {
      headers: auth,
      body: { fromStepId: steps[from], toStepId: steps[to], ...(branch ? { branch } : {}) },
    });
    expect(res.status, res.text).toBe(201);
  }
  if (spec.enable !== false) {
    const res = await pigeon.request('PATCH', `/workflows/${id}`, { headers: auth, body: { enabled: true } });
    expect(res.status, res.text).toBe(200);
  }
  return { id, steps };
}

export async function createTemplate(pigeon: TestPigeon, auth: Auth, body: Record<string, unknown>) {
  const res = await pigeon.request('POST', '/templates', { headers: auth, body: { name: 'wf template', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

/** The executions of a workflow (first page, newest first). */
export async function executionsOf(pigeon: TestPigeon, auth: Auth, workflowId: string, query = '') {
  const res = await pigeon.request('GET', `/workflows/${workflowId}/executions?limit=100${query}`, { headers: auth });
  expect(res.status, res.text).toBe(200);
  return res.body.data as Array<Record<string, unknown> & { id: string; status: string; contactId: string }>;
}

export async function executionDetail(pigeon: TestPigeon, auth: Auth, workflowId: string, executionId: string) {
  const res = await pigeon.request('GET', `/workflows/${workflowId}/executions/${executionId}`, { headers: auth });
  expect(res.status, res.text).toBe(200);
  return res.body as Record<string, unknown> & {
    status: string;
    steps: Array<{
      stepId: string;
      stepType: string;
      status: string;
      output: Record<string, unknown> | null;
      error: string | null;
      attempts: number;
    }>;
  };
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
  const res = await pigeon.request('POST', '/v1/track', {
    headers: auth,
    body: { email, event, ...(data ? { data } : {}), ...(subscribed === undefined ? {} : { subscribed }) },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.data as { contact: string; event: string };
}
