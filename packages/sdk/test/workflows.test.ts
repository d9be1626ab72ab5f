import { HttpResponse } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type Execution,
  type ExecutionCancelAllResult,
  type ExecutionDetail,
  type ExecutionPage,
  PigeonError,
  type StepConfig,
  type UpdateContactStepConfig,
  type Workflow,
  type WorkflowDetail,
  type WorkflowExecutions,
  type WorkflowField,
  type WorkflowStep,
  type WorkflowStepInput,
  type WorkflowSteps,
  type Workflows,
  type WorkflowTransition,
  type WorkflowTransitions,
} from '../src/index.js';
import { BASE, mockPigeonApi, requestId, uuid } from './msw-server.js';

const { server, route, pigeon } = mockPigeonApi();

const now = '2026-11-23T10:00:00.000Z';
const id = uuid(100);
const stepId = uuid(400);
const contactId = uuid(1);
const executionId = uuid(700);

const workflow = (overrides: Partial<Workflow> = {}): Workflow => ({
  id,
  name: 'Onboarding',
  description: null,
  triggerType: 'EVENT',
  triggerConfig: { eventName: 'signed-up' },
  enabled: false,
  allowReentry: false,
  projectId: uuid(200),
  createdAt: now,
  updatedAt: now,
  executions: { active: 0, total: 0 },
  ...overrides,
});

const step = (overrides: Partial<WorkflowStep> = {}): WorkflowStep => ({
  id: stepId,
  workflowId: id,
  type: 'UPDATE_CONTACT',
  name: 'Tag',
  position: { x: 0, y: 0 },
  config: { updates: { onboarded: true }, subscriptionAction: 'none' },
  templateId: null,
  createdAt: now,
  updatedAt: now,
  ...overrides,
});

const transition = (overrides: Partial<WorkflowTransition> = {}): WorkflowTransition => ({
  id: uuid(500),
  workflowId: id,
  fromStepId: stepId,
  toStepId: uuid(401),
  branch: null,
  createdAt: now,
  ...overrides,
});

const detail = (overrides: Partial<WorkflowDetail> = {}): WorkflowDetail => ({
  ...workflow(),
  steps: [step()],
  transitions: [],
  ...overrides,
});

const execution = (overrides: Partial<Execution> = {}): Execution => ({
  id: executionId,
  workflowId: id,
  contactId,
  status: 'RUNNING',
  currentStepId: stepId,
  waitingFor: null,
  nextRunAt: null,
  exitReason: null,
  context: { workflow: { plan: 'pro' } },
  startedAt: now,
  completedAt: null,
  updatedAt: now,
  ...overrides,
});

const envelope = (status: number, code: string, message: string, extra: Record<string, unknown> = {}) =>
  HttpResponse.json(
    { success: false, error: { code, message, statusCode: status, requestId, ...extra }, timestamp: now },
    { status },
  );

const query = (request: Request | undefined) => Object.fromEntries(new URL(request?.url ?? '').searchParams);

describe('workflows: CRUD', () => {
  it('create POSTs the body and resolves with the workflow and its (empty) graph', async () => {
    const created = detail({ steps: [] });
    const requests = route('post', '/workflows', () => HttpResponse.json(created, { status: 201 }));
    const body = { name: 'Onboarding', triggerConfig: { eventName: 'signed-up' }, allowReentry: true };
    const result = await pigeon().workflows.create(body);
    expectTypeOf(result).toEqualTypeOf<WorkflowDetail>();
    expect(result).toEqual(created);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.url).toBe(`${BASE}/workflows`);
    expect(requests[0]?.headers.get('content-type')).toBe('application/json');
    expect(requests[0]?.headers.get('authorization')).toBe('Bearer sk_test');
    expect(requests[0]?.headers.get('idempotency-key')).toBeNull();
    expect(await requests[0]?.json()).toEqual(body);
  });

  it('list unwraps { data }; get, update (PATCH) and delete hit their method and path', async () => {
    const listed = route('get', '/workflows', () =>
      HttpResponse.json({ data: [workflow(), workflow({ id: uuid(101) })] }),
    );
    const got = route('get', '/workflows/:id', () => HttpResponse.json(detail()));
    const patched = route('patch', '/workflows/:id', () => HttpResponse.json(detail({ name: 'Renamed' })));
    const deleted = route('delete', '/workflows/:id', () => new HttpResponse(null, { status: 204 }));
    const workflows = pigeon().workflows;

    const all = await workflows.list();
    expectTypeOf(all).toEqualTypeOf<Workflow[]>();
    expect(all.map((w) => w.id)).toEqual([id, uuid(101)]);
    expect(listed[0]?.url).toBe(`${BASE}/workflows`);

    const one = await workflows.get(id);
    expectTypeOf(one).toEqualTypeOf<WorkflowDetail>();
    expect(one.steps).toEqual([step()]);
    expect(got[0]?.url).toBe(`${BASE}/workflows/${id}`);

    const updated = await workflows.update(id, { name: 'Renamed', triggerConfig: { eventName: 'paid' } });
    expect(updated.name).toBe('Renamed');
    expect(patched[0]?.url).toBe(`${BASE}/workflows/${id}`);
    expect(await patched[0]?.json()).toEqual({ name: 'Renamed', triggerConfig: { eventName: 'paid' } });

    expect(await workflows.delete(id)).toBeUndefined();
    expect(deleted[0]?.url).toBe(`${BASE}/workflows/${id}`);
    expect(await deleted[0]?.text()).toBe('');
  });

  it('enable and disable PATCH only `enabled`', async () => {
    const requests = route('patch', '/workflows/:id', async (request) => {
      const { enabled } = (await request.json()) as { enabled: boolean };
      return HttpResponse.json(detail({ enabled }));
    });
    const workflows = pigeon().workflows;
    const enabled = await workflows.enable(id);
    expectTypeOf(enabled).toEqualTypeOf<WorkflowDetail>();
    expect(enabled.enabled).toBe(true);
    expect((await workflows.disable(id, { timeoutMs: 5_000 })).enabled).toBe(false);
    expect(requests.map((r) => r.url)).toEqual([`${BASE}/workflows/${id}`, `${BASE}/workflows/${id}`]);
    expect(await Promise.all(requests.map((r) => r.json()))).toEqual([{ enabled: true }, { enabled: false }]);
  });

  it('fields sends eventName and unwraps { data }', async () => {
    const fields: WorkflowField[] = [
      { field: 'email', source: 'contact', type: 'string', operators: ['equals'] },
      { field: 'event.plan', source: 'event', type: 'string', operators: ['equals'] },
    ];
    const requests = route('get', '/workflows/fields', () => HttpResponse.json({ data: fields }));
    const result = await pigeon().workflows.fields({ eventName: 'signed-up' });
    expectTypeOf(result).toEqualTypeOf<WorkflowField[]>();
    expect(result).toEqual(fields);
    expect(requests[0]?.url.split('?')[0]).toBe(`${BASE}/workflows/fields`);
    expect(query(requests[0])).toEqual({ eventName: 'signed-up' });

    await pigeon().workflows.fields();
    expect(requests[1]?.url).toBe(`${BASE}/workflows/fields`);
  });

  it('methods work detached from the client, nested resources included', async () => {
    route('get', '/workflows/:id', () => HttpResponse.json(detail()));
    route('get', '/workflows/:id/executions/:executionId', () => HttpResponse.json({ ...execution(), steps: [] }));
    const workflows = pigeon().workflows;
    expectTypeOf(workflows).toEqualTypeOf<Workflows>();
    expectTypeOf(workflows.steps).toEqualTypeOf<WorkflowSteps>();
    expectTypeOf(workflows.transitions).toEqualTypeOf<WorkflowTransitions>();
    expectTypeOf(workflows.executions).toEqualTypeOf<WorkflowExecutions>();
    const { get } = workflows;
    const {
      executions: { get: getExecution },
    } = workflows;
    expect((await get(id)).id).toBe(id);
    expect((await getExecution(id, executionId)).id).toBe(executionId);
  });
});

describe('workflows: steps and transitions', () => {
  it('steps.add POSTs the typed step and resolves with it', async () => {
    const requests = route('post', '/workflows/:id/steps', () => HttpResponse.json(step(), { status: 201 }));
    const body: WorkflowStepInput = {
      type: 'UPDATE_CONTACT',
      name: 'Tag',
      position: { x: 10, y: 20 },
      config: { updates: { onboarded: true, plan: '{{workflow.plan}}' } },
    };
    const added = await pigeon().workflows.steps.add(id, body);
    expectTypeOf(added).toEqualTypeOf<WorkflowStep>();
    expect(added).toEqual(step());
    expect(requests[0]?.url).toBe(`${BASE}/workflows/${id}/steps`);
    expect(await requests[0]?.json()).toEqual(body);

    await pigeon().workflows.steps.add(id, { type: 'EXIT' }); // no config needed: EXIT has no required field
    expect(await requests[1]?.json()).toEqual({ type: 'EXIT' });
  });

  it('types each step config by its step type', () => {
    expectTypeOf<StepConfig<'UPDATE_CONTACT'>>().toEqualTypeOf<UpdateContactStepConfig>();
    expectTypeOf<StepConfig<'DELAY'>>().toMatchTypeOf<{
      amount: number;
      unit: 'seconds' | 'minutes' | 'hours' | 'days';
    }>();
    const steps = pigeon().workflows.steps;
    // Compile-time checks only: these calls are never made.
    const typed = () => [
      steps.add(id, { type: 'DELAY', config: { amount: 2, unit: 'days' } }),
      steps.add(id, { type: 'CONDITION', config: { field: 'data.plan', operator: 'equals', value: 'pro' } }),
      steps.add(id, { type: 'CONDITION', config: { condition: { groups: [{ filters: [] }] } } }),
      steps.add(id, { type: 'WAIT_FOR_EVENT', config: { eventName: 'paid', timeout: 3600 } }),
      steps.add(id, { type: 'WEBHOOK', config: { url: 'https://example.com/hook' } }),
      steps.add(id, { type: 'SEND_EMAIL', config: { templateId: uuid(600) } }),
      // @ts-expect-error a DELAY needs its config
      steps.add(id, { type: 'DELAY' }),
      // @ts-expect-error `unit` must be a duration unit
      steps.add(id, { type: 'DELAY', config: { amount: 2, unit: 'weeks' } }),
      // @ts-expect-error a WAIT_FOR_EVENT config has no `amount`
      steps.add(id, { type: 'WAIT_FOR_EVENT', config: { eventName: 'paid', amount: 2 } }),
      steps.update<'DELAY'>(id, stepId, { config: { amount: 1, unit: 'hours' } }),
      // @ts-expect-error the config of a DELAY step
      steps.update<'DELAY'>(id, stepId, { config: { eventName: 'paid' } }),
    ];
    expect(typeof typed).toBe('function');
  });

  it('steps.update PATCHes the step', async () => {
    const requests = route('patch', '/workflows/:id/steps/:stepId', () =>
      HttpResponse.json(step({ name: 'Tag again' })),
    );
    const updated = await pigeon().workflows.steps.update(id, stepId, {
      name: 'Tag again',
      config: { updates: { onboarded: false } },
    });
    expectTypeOf(updated).toEqualTypeOf<WorkflowStep>();
    expect(updated.name).toBe('Tag again');
    expect(requests[0]?.url).toBe(`${BASE}/workflows/${id}/steps/${stepId}`);
    expect(await requests[0]?.json()).toEqual({ name: 'Tag again', config: { updates: { onboarded: false } } });
  });

  it('steps.remove sends splice as a query string only when given, not the request options', async () => {
    const requests = route('delete', '/workflows/:id/steps/:stepId', () => new HttpResponse(null, { status: 204 }));
    const steps = pigeon().workflows.steps;
    expect(await steps.remove(id, stepId)).toBeUndefined();
    await steps.remove(id, stepId, { splice: true, timeoutMs: 5_000 });
    await steps.remove(id, stepId, { splice: false });
    expect(requests.map((r) => r.url)).toEqual([
      `${BASE}/workflows/${id}/steps/${stepId}`,
      `${BASE}/workflows/${id}/steps/${stepId}?splice=true`,
      `${BASE}/workflows/${id}/steps/${stepId}?splice=false`,
    ]);
    expect(await requests[1]?.text()).toBe('');
  });

  it('transitions.add POSTs the transition; remove DELETEs it', async () => {
    const added = route('post', '/workflows/:id/transitions', () =>
      HttpResponse.json(transition({ branch: 'yes' }), { status: 201 }),
    );
    const removed = route(
      'delete',
      '/workflows/:id/transitions/:transitionId',
      () => new HttpResponse(null, { status: 204 }),
    );
    const transitions = pigeon().workflows.transitions;
    const body = { fromStepId: stepId, toStepId: uuid(401), branch: 'yes' as const };
    const result = await transitions.add(id, body);
    expectTypeOf(result).toEqualTypeOf<WorkflowTransition>();
    expect(result.branch).toBe('yes');
    expect(added[0]?.url).toBe(`${BASE}/workflows/${id}/transitions`);
    expect(await added[0]?.json()).toEqual(body);

    expect(await transitions.remove(id, uuid(500))).toBeUndefined();
    expect(removed[0]?.url).toBe(`${BASE}/workflows/${id}/transitions/${uuid(500)}`);
  });
});

describe('workflows: executions', () => {
  it('start POSTs the contact and context and resolves with the execution', async () => {
    const requests = route('post', '/workflows/:id/executions', () => HttpResponse.json(execution(), { status: 201 }));
    const started = await pigeon().workflows.executions.start(id, { contactId, context: { plan: 'pro' } });
    expectTypeOf(started).toEqualTypeOf<Execution>();
    expect(started).toEqual(execution());
    expect(requests[0]?.url).toBe(`${BASE}/workflows/${id}/executions`);
    expect(await requests[0]?.json()).toEqual({ contactId, context: { plan: 'pro' } });
  });

  it('list asks for one page with its filters', async () => {
    const page: ExecutionPage = { data: [execution()], cursor: 'next', hasMore: true, total: 3 };
    const requests = route('get', '/workflows/:id/executions', () => HttpResponse.json(page));
    const result = await pigeon().workflows.executions.list(id, { status: 'WAITING', contactId, limit: 1 });
    expectTypeOf(result).toEqualTypeOf<ExecutionPage>();
    expect(result).toEqual(page);
    expect(requests[0]?.url.split('?')[0]).toBe(`${BASE}/workflows/${id}/executions`);
    expect(query(requests[0])).toEqual({ status: 'WAITING', contactId, limit: '1' });
  });

  /** Five executions served two per page, the cursor being the next index. */
  function fiveExecutions() {
    const rows = [1, 2, 3, 4, 5].map((n) => execution({ id: uuid(700 + n), status: 'COMPLETED' }));
    return route('get', '/workflows/:id/executions', (request) => {
      const url = new URL(request.url);
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const limit = Number(url.searchParams.get('limit') ?? 20);
      const end = start + limit;
      return HttpResponse.json({
        data: rows.slice(start, end),
        cursor: end < rows.length ? String(end) : null,
        hasMore: end < rows.length,
        total: start === 0 ? rows.length : 0,
      });
    });
  }

  it('all follows the cursor lazily, keeping the filters, until hasMore is false', async () => {
    const requests = fiveExecutions();
    const iterator = pigeon().workflows.executions.all(id, { status: 'COMPLETED', limit: 2 });
    expect(requests).toHaveLength(0); // nothing is fetched before iteration
    const seen: string[] = [];
    for await (const item of iterator) {
      expectTypeOf(item).toEqualTypeOf<Execution>();
      seen.push(item.id);
    }
    expect(seen).toEqual([701, 702, 703, 704, 705].map(uuid));
    expect(requests.map(query)).toEqual([
      { status: 'COMPLETED', limit: '2' },
      { status: 'COMPLETED', limit: '2', cursor: '2' },
      { status: 'COMPLETED', limit: '2', cursor: '4' },
    ]);
  });

  it('all starts at query.cursor, and stops requesting when the loop breaks', async () => {
    const requests = fiveExecutions();
    const seen: string[] = [];
    for await (const item of pigeon().workflows.executions.all(id, { cursor: '2', limit: 2 })) {
      seen.push(item.id);
      if (seen.length === 1) break;
    }
    expect(seen).toEqual([uuid(703)]);
    expect(requests.map(query)).toEqual([{ cursor: '2', limit: '2' }]);
  });

  it('get resolves with the step records; cancel DELETEs; cancelAll POSTs without a body', async () => {
    const record: ExecutionDetail = {
      ...execution({ status: 'COMPLETED', currentStepId: null, completedAt: now }),
      steps: [
        {
          id: uuid(800),
          stepId,
          stepType: 'UPDATE_CONTACT',
          stepName: 'Tag',
          status: 'COMPLETED',
          output: { set: ['onboarded'], removed: [], subscribed: true },
          error: null,
          attempts: 1,
          startedAt: now,
          finishedAt: now,
        },
      ],
    };
    const got = route('get', '/workflows/:id/executions/:executionId', () => HttpResponse.json(record));
    const cancelled = route('delete', '/workflows/:id/executions/:executionId', () =>
      HttpResponse.json(execution({ status: 'CANCELLED' })),
    );
    const all = route('post', '/workflows/:id/executions/cancel-all', () => HttpResponse.json({ cancelled: 4 }));
    const executions = pigeon().workflows.executions;

    const one = await executions.get(id, executionId);
    expectTypeOf(one).toEqualTypeOf<ExecutionDetail>();
    expect(one).toEqual(record);
    expect(got[0]?.url).toBe(`${BASE}/workflows/${id}/executions/${executionId}`);

    const stopped = await executions.cancel(id, executionId);
    expectTypeOf(stopped).toEqualTypeOf<Execution>();
    expect(stopped.status).toBe('CANCELLED');
    expect(cancelled[0]?.url).toBe(`${BASE}/workflows/${id}/executions/${executionId}`);
    expect(await cancelled[0]?.text()).toBe('');

    const result = await executions.cancelAll(id);
    expectTypeOf(result).toEqualTypeOf<ExecutionCancelAllResult>();
    expect(result).toEqual({ cancelled: 4 });
    expect(all[0]?.url).toBe(`${BASE}/workflows/${id}/executions/cancel-all`);
    expect(await all[0]?.text()).toBe('');
  });
});

describe('workflows: errors and retries', () => {
  it('turns the 422 of enable into a PigeonError with one entry per problem, without retrying', async () => {
    const errors = [
      { field: 'enabled', message: 'The workflow has no steps', code: 'invalid_workflow' },
      { field: 'enabled', message: 'A cycle without a DELAY', code: 'invalid_workflow' },
    ];
    const requests = route('patch', '/workflows/:id', () =>
      envelope(422, 'VALIDATION_ERROR', 'The workflow cannot be enabled: The workflow has no steps', { errors }),
    );
    const error = await pigeon()
      .workflows.enable(id)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({ status: 422, code: 'VALIDATION_ERROR', errors, requestId });
    expect(requests).toHaveLength(1);
  });

  it('does not retry start on a 5xx (a POST without an Idempotency-Key), nor on its 409', async () => {
    const failed = route('post', '/workflows/:id/executions', () => envelope(503, 'SERVICE_UNAVAILABLE', 'Try again'));
    await expect(pigeon().workflows.executions.start(id, { contactId })).rejects.toMatchObject({ status: 503 });
    expect(failed).toHaveLength(1);

    server.resetHandlers();
    const message = 'The contact has already been through this workflow and it does not allow re-entry';
    const refused = route('post', '/workflows/:id/executions', () => envelope(409, 'CONFLICT', message));
    const error = await pigeon()
      .workflows.executions.start(id, { contactId })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'PigeonError', status: 409, code: 'CONFLICT', message });
    expect(refused).toHaveLength(1);
  });

  it('retries reads and cancels (GET, DELETE) after a 5xx', async () => {
    const got = route('get', '/workflows/:id/executions/:executionId', (_request, n) =>
      n === 0 ? envelope(503, 'SERVICE_UNAVAILABLE', 'Try again') : HttpResponse.json({ ...execution(), steps: [] }),
    );
    const cancelled = route('delete', '/workflows/:id/executions/:executionId', (_request, n) =>
      n === 0 ? envelope(502, 'BAD_GATEWAY', 'Bad gateway') : HttpResponse.json(execution({ status: 'CANCELLED' })),
    );
    const executions = pigeon().workflows.executions;
    expect((await executions.get(id, executionId)).id).toBe(executionId);
    expect(got).toHaveLength(2);
    expect((await executions.cancel(id, executionId)).status).toBe('CANCELLED');
    expect(cancelled).toHaveLength(2);
  });

  it('all rejects with the PigeonError of a failing page', async () => {
    const requests = route('get', '/workflows/:id/executions', (_request, n) =>
      n === 0
        ? HttpResponse.json({ data: [execution()], cursor: 'next', hasMore: true, total: 2 })
        : envelope(404, 'NOT_FOUND', 'Workflow not found'),
    );
    const seen: string[] = [];
    const error = await (async () => {
      for await (const item of pigeon().workflows.executions.all(id)) seen.push(item.id);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([executionId]);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect(requests).toHaveLength(2);
  });

  it('rejects delete and steps.remove with their 409 CONFLICT', async () => {
    route('delete', '/workflows/:id', () => envelope(409, 'CONFLICT', 'The workflow has 2 running executions'));
    route('delete', '/workflows/:id/steps/:stepId', () => envelope(409, 'CONFLICT', '1 executions are at step'));
    const workflows = pigeon().workflows;
    await expect(workflows.delete(id)).rejects.toMatchObject({ name: 'PigeonError', status: 409, code: 'CONFLICT' });
    await expect(workflows.steps.remove(id, stepId, { splice: true })).rejects.toMatchObject({
      status: 409,
      code: 'CONFLICT',
    });
  });
});
