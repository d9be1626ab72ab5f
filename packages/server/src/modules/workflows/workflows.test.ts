import type { WorkflowCreate } from '@pigeon/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { startDnsServer, type TestDnsServer } from '../../../test/dns-server.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { verifiedSender } from '../../../test/sending.js';
import { buildWorkflow, createTemplate, executionsOf, track, until } from '../../../test/workflows.js';

let pigeon: TestPigeon;
let dns: TestDnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
  pigeon = await startTestPigeon({
    env: { DNS_SERVERS: dns.address, CHANGE_FEED_POLL_MS: '20', WORKFLOW_POLL_MS: '50' },
  });
});
afterAll(async () => {
  await pigeon?.stop();
  await dns?.close();
});

type Auth = Record<string, string>;
const create = (auth: Auth, body: z.input<typeof WorkflowCreate>) => api(pigeon, auth).workflows.create({ body });
const addStep = (auth: Auth, id: string, body: Parameters<ReturnType<typeof api>['workflows']['addStep']>[0]['body']) =>
  api(pigeon, auth).workflows.addStep({ params: { id }, body });
const enable = (auth: Auth, id: string) =>
  api(pigeon, auth).workflows.update({ params: { id }, body: { enabled: true } });
const linkSteps = (auth: Auth, id: string, fromStepId: string, toStepId: string, branch?: 'yes' | 'no' | 'timeout') =>
  api(pigeon, auth).workflows.addTransition({
    params: { id },
    body: { fromStepId, toStepId, ...(branch ? { branch } : {}) },
  });

describe('workflow graph API', () => {
  it('creates EVENT-triggered, disabled workflows; enabled:true on create is a 400', async () => {
    const { auth } = await newProject(pigeon);
    const res = await create(auth, { name: 'Onboarding', triggerConfig: { eventName: 'signup' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Onboarding',
      triggerType: 'EVENT',
      triggerConfig: { eventName: 'signup' },
      enabled: false,
      allowReentry: false,
      steps: [],
      transitions: [],
      executions: { active: 0, total: 0 },
    });
    expectEnvelope(
      await create(auth, { name: 'x', triggerConfig: { eventName: 'a' }, enabled: true }),
      400,
      'BAD_REQUEST',
    );
    // Missing triggerConfig on purpose.
    const missing = expectEnvelope(
      // untyped: wrong on purpose (a body the contract's types refuse)
      await pigeon.request('POST', '/workflows', { headers: auth, body: { name: 'x' } }),
      422,
      'VALIDATION_ERROR',
    );
    expect(missing.errors?.map((e) => e.field)).toContain('triggerConfig');
    const list = await api(pigeon, auth).workflows.list();
    expect(bodyOf(list, 200).data.map((w) => w.id)).toEqual([bodyOf(res, 201).id]);
  });

  it('checks each step config against its type and names the bad field', async () => {
    const s = await verifiedSender(pigeon, dns);
    const wf = bodyOf(await create(s.auth, { name: 'cfg', triggerConfig: { eventName: 'e' } }), 201).id;
    const badUnit = expectEnvelope(
      await addStep(s.auth, wf, { type: 'DELAY', config: { amount: 2, unit: 'weeks' } }),
      422,
      'VALIDATION_ERROR',
    );
    expect(badUnit.errors?.[0]?.field).toBe('config.unit');
    const tooLong = expectEnvelope(
      await addStep(s.auth, wf, { type: 'DELAY', config: { amount: 400, unit: 'days' } }),
      422,
      'VALIDATION_ERROR',
    );
    expect(tooLong.errors?.[0]).toMatchObject({ field: 'config.amount', message: 'A delay is at most one year' });
    const unknownKey = expectEnvelope(
      await addStep(s.auth, wf, { type: 'EXIT', config: { reason: 'x', colour: 'red' } }),
      422,
      'VALIDATION_ERROR',
    );
    expect(unknownKey.errors?.[0]?.code).toBe('unrecognized_keys');
    const condition = expectEnvelope(
      await addStep(s.auth, wf, {
        type: 'CONDITION',
        config: { field: 'subscribed', operator: 'greaterThan', value: 1 },
      }),
      400,
      'INVALID_CONDITION',
    );
    expect(condition.errors?.[0]?.field).toBe('config.groups.0.filters.0.operator');
    const tree = expectEnvelope(
      await addStep(s.auth, wf, {
        type: 'CONDITION',
        config: {
          condition: { logic: 'AND', groups: [{ filters: [{ field: 'nope', operator: 'equals', value: 1 }] }] },
        },
      }),
      400,
      'INVALID_CONDITION',
    );
    expect(tree.errors?.[0]?.field).toBe('config.condition.groups.0.filters.0.field');
    expectEnvelope(
      await addStep(s.auth, wf, { type: 'SEND_EMAIL', config: { templateId: '00000000-0000-4000-8000-000000000000' } }),
      400,
      'BAD_REQUEST',
    );
    const url = expectEnvelope(
      await addStep(s.auth, wf, { type: 'WEBHOOK', config: { url: 'ftp://example.com/x' } }),
      422,
      'VALIDATION_ERROR',
    );
    expect(url.errors?.[0]?.field).toBe('config.url');
    const custom = expectEnvelope(
      await addStep(s.auth, wf, {
        type: 'SEND_EMAIL',
        config: { templateId: '00000000-0000-4000-8000-000000000000', recipient: { type: 'CUSTOM' } },
      }),
      422,
      'VALIDATION_ERROR',
    );
    expect(custom.errors?.[0]?.field).toBe('config.recipient.customEmail');
    const ok = await addStep(s.auth, wf, {
      type: 'CONDITION',
      config: { field: 'event.amount', operator: 'greaterThan', value: 10 },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(bodyOf(await api(pigeon, s.auth).workflows.get({ params: { id: wf } }), 200).steps).toHaveLength(1);
  });

  it('transitions follow branch rules; one way out per branch', async () => {
    const { auth } = await newProject(pigeon);
    const wf = bodyOf(await create(auth, { name: 'branches', triggerConfig: { eventName: 'e' } }), 201).id;
    const cond = bodyOf(
      await addStep(auth, wf, { type: 'CONDITION', config: { field: 'email', operator: 'exists' } }),
      201,
    ).id;
    const wait = bodyOf(
      await addStep(auth, wf, { type: 'WAIT_FOR_EVENT', config: { eventName: 'x', timeout: 60 } }),
      201,
    ).id;
    const exit = bodyOf(await addStep(auth, wf, { type: 'EXIT' }), 201).id;
    const link = (from: string, to: string, branch?: 'yes' | 'no' | 'timeout') => linkSteps(auth, wf, from, to, branch);
    expect(expectEnvelope(await link(cond, wait), 400, 'BAD_REQUEST').message).toContain('"yes" or "no"');
    expect((await link(cond, wait, 'yes')).status).toBe(201);
    expectEnvelope(await link(cond, exit, 'yes'), 409, 'CONFLICT');
    expect((await link(cond, exit, 'no')).status).toBe(201);
    expectEnvelope(await link(wait, exit, 'yes'), 400, 'BAD_REQUEST');
    expect((await link(wait, exit, 'timeout')).status).toBe(201);
    expect(expectEnvelope(await link(exit, wait), 400, 'BAD_REQUEST').message).toContain('nothing can follow');
    const other = bodyOf(await create(auth, { name: 'other', triggerConfig: { eventName: 'e' } }), 201).id;
    const foreign = bodyOf(await addStep(auth, other, { type: 'EXIT' }), 201).id;
    expect(expectEnvelope(await link(cond, foreign, 'no'), 400, 'BAD_REQUEST').message).toContain('toStepId');
    expect((await enable(auth, wf)).status).toBe(200);
  });

  it('enabling checks the graph and names every problem; an enabled graph stays runnable', async () => {
    const { auth } = await newProject(pigeon);
    const wf = bodyOf(await create(auth, { name: 'graph', triggerConfig: { eventName: 'e' } }), 201).id;
    expect(expectEnvelope(await enable(auth, wf), 422, 'VALIDATION_ERROR').message).toContain('no steps');
    const cond = bodyOf(
      await addStep(auth, wf, { type: 'CONDITION', config: { field: 'email', operator: 'exists' } }),
      201,
    ).id;
    const a = bodyOf(
      await addStep(auth, wf, { type: 'UPDATE_CONTACT', name: 'a', config: { updates: { a: 1 } } }),
      201,
    ).id;
    const b = bodyOf(
      await addStep(auth, wf, { type: 'UPDATE_CONTACT', name: 'b', config: { updates: { b: 1 } } }),
      201,
    ).id;
    const link = (from: string, to: string, branch?: 'yes' | 'no') => linkSteps(auth, wf, from, to, branch);
    await link(cond, a, 'yes');
    const problems = expectEnvelope(await enable(auth, wf), 422, 'VALIDATION_ERROR').errors?.map((e) => e.message);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('needs both a "yes" and a "no" transition'),
        expect.stringContaining('Only one step may have no transition leading to it'),
      ]),
    );
    await link(cond, b, 'no');
    await link(a, b);
    const cycle = await link(b, a);
    expect(cycle.status).toBe(201);
    expect(expectEnvelope(await enable(auth, wf), 422, 'VALIDATION_ERROR').message).toContain(
      'A cycle without a DELAY or WAIT_FOR_EVENT',
    );
    const client = api(pigeon, auth);
    await client.workflows.deleteTransition({ params: { id: wf, transitionId: bodyOf(cycle, 201).id } });
    expect((await enable(auth, wf)).status).toBe(200);
    // Enabled: an edit that would break it is refused and changes nothing.
    const detail = bodyOf(await client.workflows.get({ params: { id: wf } }), 200);
    const noBranch = detail.transitions.find((t) => t.branch === 'no');
    const broken = await client.workflows.deleteTransition({
      params: { id: wf, transitionId: noBranch?.id ?? 'no "no" transition' },
    });
    expectEnvelope(broken, 422, 'VALIDATION_ERROR');
    expect(bodyOf(await client.workflows.get({ params: { id: wf } }), 200).transitions).toHaveLength(3);
  });

  it('a cycle through a DELAY is allowed', async () => {
    const { auth } = await newProject(pigeon);
    const wf = await buildWorkflow(pigeon, auth, {
      trigger: 'loop',
      steps: [
        { key: 'tag', type: 'UPDATE_CONTACT', config: { updates: { looped: true } } },
        { key: 'wait', type: 'DELAY', config: { amount: 1, unit: 'days' } },
      ],
      transitions: [
        ['tag', 'wait'],
        ['wait', 'tag'],
      ],
      enable: false,
    });
    // Every step has a way in: there is no first step.
    expect(expectEnvelope(await enable(auth, wf.id), 422, 'VALIDATION_ERROR').message).toContain('no first step');
    const entry = bodyOf(
      await addStep(auth, wf.id, { type: 'UPDATE_CONTACT', config: { updates: { start: 1 } } }),
      201,
    ).id;
    await linkSteps(auth, wf.id, entry, wf.steps.tag ?? 'no tag step');
    expect((await enable(auth, wf.id)).status).toBe(200);
  });

  it('steps: PATCH re-checks the config; delete with splice reconnects; a step with executions on it stays', async () => {
    const { auth } = await newProject(pigeon);
    const wf = await buildWorkflow(pigeon, auth, {
      trigger: 'chain',
      steps: [
        { key: 'one', type: 'UPDATE_CONTACT', config: { updates: { one: 1 } } },
        { key: 'wait', type: 'DELAY', config: { amount: 1, unit: 'hours' } },
        { key: 'three', type: 'UPDATE_CONTACT', config: { updates: { three: 3 } } },
      ],
      transitions: [
        ['one', 'wait'],
        ['wait', 'three'],
      ],
    });
    const client = api(pigeon, auth);
    const waitStep = { id: wf.id, stepId: wf.steps.wait ?? 'no wait step' };
    const patched = await client.workflows.updateStep({
      params: waitStep,
      body: { name: 'Wait a bit', config: { amount: 30, unit: 'minutes' } },
    });
    expect(patched.body).toMatchObject({ name: 'Wait a bit', config: { amount: 30, unit: 'minutes' } });
    const bad = await client.workflows.updateStep({ params: waitStep, body: { config: { eventName: 'x' } } });
    expectEnvelope(bad, 422, 'VALIDATION_ERROR');

    await track(pigeon, auth, `chain-${Date.now()}@example.com`, 'chain');
    await until(
      () => executionsOf(pigeon, auth, wf.id),
      (l) => l.some((e) => e.status === 'WAITING'),
    );
    const busy = await client.workflows.deleteStep({ params: waitStep, query: { splice: 'true' } });
    expectEnvelope(busy, 409, 'CONFLICT');
    await client.workflows.cancelAll({ params: { id: wf.id } });
    const spliced = await client.workflows.deleteStep({ params: waitStep, query: { splice: 'true' } });
    expect(spliced.status).toBe(204);
    const detail = bodyOf(await client.workflows.get({ params: { id: wf.id } }), 200);
    expect(detail.steps.map((x) => x.id)).toEqual([wf.steps.one, wf.steps.three]);
    expect(detail.transitions).toEqual([
      expect.objectContaining({ fromStepId: wf.steps.one, toStepId: wf.steps.three, branch: null }),
    ]);
    expect(detail.enabled).toBe(true);
  });

  it('another project’s workflows, steps and executions are 404', async () => {
    const mine = await newProject(pigeon);
    const theirs = await newProject(pigeon);
    const wf = await buildWorkflow(pigeon, theirs.auth, {
      trigger: 'x',
      steps: [{ key: 'end', type: 'EXIT' }],
      transitions: [],
    });
    const client = api(pigeon, mine.auth);
    const params = { id: wf.id };
    for (const res of [
      await client.workflows.get({ params }),
      await client.workflows.update({ params, body: {} }),
      await client.workflows.delete({ params }),
      await client.workflows.addStep({ params, body: { type: 'EXIT' } }),
      await client.workflows.deleteStep({ params: { id: wf.id, stepId: wf.steps.end ?? 'no end step' } }),
      await client.workflows.listExecutions({ params }),
      await client.workflows.cancelAll({ params }),
    ]) {
      expectEnvelope(res, 404, 'NOT_FOUND');
    }
    const contact = await client.contacts.create({ body: { email: 'me@example.com' } });
    const start = await client.workflows.startExecution({
      params,
      body: { contactId: bodyOf(contact, 201).id },
    });
    expectEnvelope(start, 404, 'NOT_FOUND');
  });

  it('usage: templates, events and fields name the workflows that use them; a sent template cannot be deleted', async () => {
    const s = await verifiedSender(pigeon, dns);
    const template = await createTemplate(pigeon, s.auth, { subject: 'Hi', body: '<p>hi</p>', from: s.from });
    const wf = await buildWorkflow(pigeon, s.auth, {
      name: 'Usage flow',
      trigger: 'usage.start',
      steps: [
        { key: 'plan?', type: 'CONDITION', config: { field: 'data.plan', operator: 'equals', value: 'pro' } },
        { key: 'mail', type: 'SEND_EMAIL', config: { templateId: template } },
        { key: 'wait', type: 'WAIT_FOR_EVENT', config: { eventName: 'usage.done' } },
      ],
      transitions: [
        ['plan?', 'mail', 'yes'],
        ['plan?', 'wait', 'no'],
      ],
    });
    const client = api(pigeon, s.auth);
    const usage = await client.templates.usage({ params: { id: template } });
    expect(usage.body).toEqual({
      campaigns: [],
      workflowSteps: [{ id: wf.steps.mail, workflowId: wf.id, name: 'mail' }],
    });
    expectEnvelope(await client.templates.delete({ params: { id: template } }), 409, 'CONFLICT');
    for (const name of ['usage.start', 'usage.done']) {
      const events = await client.events.usage({ params: { eventName: name } });
      expect(bodyOf(events, 200).workflows).toEqual([{ id: wf.id, name: 'Usage flow' }]);
    }
    const field = await client.contacts.fieldUsage({ params: { field: 'data.plan' } });
    expect(bodyOf(field, 200).workflows).toEqual([{ id: wf.id, name: 'Usage flow' }]);

    await track(pigeon, s.auth, `fields-${Date.now()}@example.com`, 'usage.start', { amount: 12, sku: 'x' });
    // The track starts an execution through the change feed, a moment later: it must exist before
    // cancel-all below, or it could start after it and make the delete a 409.
    await until(
      () => executionsOf(pigeon, s.auth, wf.id),
      (l) => l.length > 0,
    );
    const fields = bodyOf(await client.workflows.fields({ query: { eventName: 'usage.start' } }), 200);
    const names = fields.data.map((f) => f.field);
    expect(names).toEqual(
      expect.arrayContaining(['email', 'subscribed', 'event.amount', 'event.sku', 'event.usage.start']),
    );
    expect(fields.data.find((f) => f.field === 'event.amount')).toMatchObject({
      source: 'event',
      type: 'number',
    });

    expectEnvelope(
      await client.workflows.deleteStep({ params: { id: wf.id, stepId: wf.steps.mail ?? 'no mail step' } }),
      422,
      'VALIDATION_ERROR',
    );
    await client.workflows.update({ params: { id: wf.id }, body: { enabled: false } });
    await client.workflows.cancelAll({ params: { id: wf.id } });
    expect((await client.workflows.delete({ params: { id: wf.id } })).status).toBe(204);
    expect((await client.templates.delete({ params: { id: template } })).status).toBe(204);
  });
});

describe('project reset and delete', () => {
  it('reset wipes workflows, campaigns, segments and the templates they use; delete removes the project', async () => {
    const s = await verifiedSender(pigeon, dns);
    const template = await createTemplate(pigeon, s.auth, { subject: 'Hi', body: '<p>hi</p>', from: s.from });
    const wf = await buildWorkflow(pigeon, s.auth, {
      trigger: 'reset.me',
      steps: [
        { key: 'mail', type: 'SEND_EMAIL', config: { templateId: template } },
        { key: 'wait', type: 'DELAY', config: { amount: 1, unit: 'hours' } },
      ],
      transitions: [['mail', 'wait']],
    });
    await track(pigeon, s.auth, `reset-${Date.now()}@example.com`, 'reset.me');
    await until(
      () => executionsOf(pigeon, s.auth, wf.id),
      (l) => l.some((e) => e.status === 'WAITING'),
    );
    const client = api(pigeon, s.auth);
    const segment = await client.segments.create({
      body: {
        name: 'All',
        condition: { logic: 'AND', groups: [{ filters: [{ field: 'email', operator: 'exists' }] }] },
      },
    });
    expect(segment.status).toBe(201);
    const campaign = await client.campaigns.create({
      body: {
        name: 'c',
        subject: 's',
        body: '<p>b</p>',
        from: s.from,
        audienceType: 'SEGMENT',
        segmentId: bodyOf(segment, 201).id,
        templateId: template,
      },
    });
    expect(campaign.status).toBe(201);

    const owner = api(pigeon, { cookie: s.owner.cookie });
    const reset = await owner.users.resetProject({ params: { id: s.project.id } });
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    expect(bodyOf(await client.workflows.list(), 200).data, '/workflows').toEqual([]);
    expect(bodyOf(await client.segments.list(), 200), '/segments').toEqual([]);
    expect(bodyOf(await client.campaigns.list(), 200).total).toBe(0);
    expect(bodyOf(await client.templates.list(), 200).total).toBe(0);

    const again = await createTemplate(pigeon, s.auth, { subject: 'Hi', body: '<p>hi</p>', from: s.from });
    await buildWorkflow(pigeon, s.auth, {
      trigger: 'delete.me',
      steps: [{ key: 'mail', type: 'SEND_EMAIL', config: { templateId: again } }],
      transitions: [],
    });
    const deleted = await owner.users.deleteProject({ params: { id: s.project.id } });
    expect(deleted.status, JSON.stringify(deleted.body)).toBeLessThan(300);
  });
});
