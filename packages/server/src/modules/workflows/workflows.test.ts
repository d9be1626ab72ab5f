import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
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
const create = (auth: Auth, body: Record<string, unknown>) =>
  pigeon.request('POST', '/workflows', { headers: auth, body });
const addStep = (auth: Auth, id: string, body: Record<string, unknown>) =>
  pigeon.request('POST', `/workflows/${id}/steps`, { headers: auth, body });
const enable = (auth: Auth, id: string) =>
  pigeon.request('PATCH', `/workflows/${id}`, { headers: auth, body: { enabled: true } });

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
    const missing = expectEnvelope(await create(auth, { name: 'x' }), 422, 'VALIDATION_ERROR');
    expect(missing.errors?.map((e) => e.field)).toContain('triggerConfig');
    const list = await pigeon.request('GET', '/workflows', { headers: auth });
    expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([res.body.id]);
  });

  it('checks each step config against its type and names the bad field', async () => {
    const s = await verifiedSender(pigeon, dns);
    const wf = (await create(s.auth, { name: 'cfg', triggerConfig: { eventName: 'e' } })).body.id;
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
    expect(ok.status, ok.text).toBe(201);
    expect((await pigeon.request('GET', `/workflows/${wf}`, { headers: s.auth })).body.steps).toHaveLength(1);
  });

  it('transitions follow branch rules; one way out per branch', async () => {
    const { auth } = await newProject(pigeon);
    const wf = (await create(auth, { name: 'branches', triggerConfig: { eventName: 'e' } })).body.id;
    const cond = (await addStep(auth, wf, { type: 'CONDITION', config: { field: 'email', operator: 'exists' } })).body
      .id;
    const wait = (await addStep(auth, wf, { type: 'WAIT_FOR_EVENT', config: { eventName: 'x', timeout: 60 } })).body.id;
    const exit = (await addStep(auth, wf, { type: 'EXIT' })).body.id;
    const link = (from: string, to: string, branch?: string) =>
      pigeon.request('POST', `/workflows/${wf}/transitions`, {
        headers: auth,
        body: { fromStepId: from, toStepId: to, ...(branch ? { branch } : {}) },
      });
    expect(expectEnvelope(await link(cond, wait), 400, 'BAD_REQUEST').message).toContain('"yes" or "no"');
    expect((await link(cond, wait, 'yes')).status).toBe(201);
    expectEnvelope(await link(cond, exit, 'yes'), 409, 'CONFLICT');
    expect((await link(cond, exit, 'no')).status).toBe(201);
    expectEnvelope(await link(wait, exit, 'yes'), 400, 'BAD_REQUEST');
    expect((await link(wait, exit, 'timeout')).status).toBe(201);
    expect(expectEnvelope(await link(exit, wait), 400, 'BAD_REQUEST').message).toContain('nothing can follow');
    const other = (await create(auth, { name: 'other', triggerConfig: { eventName: 'e' } })).body.id;
    const foreign = (await addStep(auth, other, { type: 'EXIT' })).body.id;
    expect(expectEnvelope(await link(cond, foreign, 'no'), 400, 'BAD_REQUEST').message).toContain('toStepId');
    expect((await enable(auth, wf)).status).toBe(200);
  });

  it('enabling checks the graph and names every problem; an enabled graph stays runnable', async () => {
    const { auth } = await newProject(pigeon);
    const wf = (await create(auth, { name: 'graph', triggerConfig: { eventName: 'e' } })).body.id;
    expect(expectEnvelope(await enable(auth, wf), 422, 'VALIDATION_ERROR').message).toContain('no steps');
    const cond = (await addStep(auth, wf, { type: 'CONDITION', config: { field: 'email', operator: 'exists' } })).body
      .id;
    const a = (await addStep(auth, wf, { type: 'UPDATE_CONTACT', name: 'a', config: { updates: { a: 1 } } })).body.id;
    const b = (await addStep(auth, wf, { type: 'UPDATE_CONTACT', name: 'b', config: { updates: { b: 1 } } })).body.id;
    const link = (from: string, to: string, branch?: string) =>
      pigeon.request('POST', `/workflows/${wf}/transitions`, {
        headers: auth,
        body: { fromStepId: from, toStepId: to, ...(branch ? { branch } : {}) },
      });
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
    await pigeon.request('DELETE', `/workflows/${wf}/transitions/${cycle.body.id}`, { headers: auth });
    expect((await enable(auth, wf)).status).toBe(200);
    // Enabled: an edit that would break it is refused and changes nothing.
    const detail = (await pigeon.request('GET', `/workflows/${wf}`, { headers: auth })).body;
    const noBranch = detail.transitions.find((t: { branch: string }) => t.branch === 'no');
    const broken = await pigeon.request('DELETE', `/workflows/${wf}/transitions/${noBranch.id}`, { headers: auth });
    expectEnvelope(broken, 422, 'VALIDATION_ERROR');
    expect((await pigeon.request('GET', `/workflows/${wf}`, { headers: auth })).body.transitions).toHaveLength(3);
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
    const entry = (await addStep(auth, wf.id, { type: 'UPDATE_CONTACT', config: { updates: { start: 1 } } })).body.id;
    await pigeon.request('POST', `/workflows/${wf.id}/transitions`, {
      headers: auth,
      body: { fromStepId: entry, toStepId: wf.steps.tag },
    });
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
    const patched = await pigeon.request('PATCH', `/workflows/${wf.id}/steps/${wf.steps.wait}`, {
      headers: auth,
      body: { name: 'Wait a bit', config: { amount: 30, unit: 'minutes' } },
    });
    expect(patched.body).toMatchObject({ name: 'Wait a bit', config: { amount: 30, unit: 'minutes' } });
    const bad = await pigeon.request('PATCH', `/workflows/${wf.id}/steps/${wf.steps.wait}`, {
      headers: auth,
      body: { config: { eventName: 'x' } },
    });
    expectEnvelope(bad, 422, 'VALIDATION_ERROR');

    await track(pigeon, auth, `chain-${Date.now()}@example.com`, 'chain');
    await until(
      () => executionsOf(pigeon, auth, wf.id),
      (l) => l.some((e) => e.status === 'WAITING'),
    );
    const busy = await pigeon.request('DELETE', `/workflows/${wf.id}/steps/${wf.steps.wait}?splice=true`, {
      headers: auth,
    });
    expectEnvelope(busy, 409, 'CONFLICT');
    await pigeon.request('POST', `/workflows/${wf.id}/executions/cancel-all`, { headers: auth });
    const spliced = await pigeon.request('DELETE', `/workflows/${wf.id}/steps/${wf.steps.wait}?splice=true`, {
      headers: auth,
    });
    expect(spliced.status).toBe(204);
    const detail = (await pigeon.request('GET', `/workflows/${wf.id}`, { headers: auth })).body;
    expect(detail.steps.map((x: { id: string }) => x.id)).toEqual([wf.steps.one, wf.steps.three]);
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
    for (const [method, path] of [
      ['GET', `/workflows/${wf.id}`],
      ['PATCH', `/workflows/${wf.id}`],
      ['DELETE', `/workflows/${wf.id}`],
      ['POST', `/workflows/${wf.id}/steps`],
      ['DELETE', `/workflows/${wf.id}/steps/${wf.steps.end}`],
      ['GET', `/workflows/${wf.id}/executions`],
      ['POST', `/workflows/${wf.id}/executions/cancel-all`],
    ] as const) {
      const body = method === 'POST' && path.endsWith('steps') ? { type: 'EXIT' } : method === 'PATCH' ? {} : undefined;
      expectEnvelope(await pigeon.request(method, path, { headers: mine.auth, body }), 404, 'NOT_FOUND');
    }
    const contact = await pigeon.request('POST', '/contacts', {
      headers: mine.auth,
      body: { email: 'me@example.com' },
    });
    const start = await pigeon.request('POST', `/workflows/${wf.id}/executions`, {
      headers: mine.auth,
      body: { contactId: contact.body.id },
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
    const usage = await pigeon.request('GET', `/templates/${template}/usage`, { headers: s.auth });
    expect(usage.body).toEqual({
      campaigns: [],
      workflowSteps: [{ id: wf.steps.mail, workflowId: wf.id, name: 'mail' }],
    });
    expectEnvelope(await pigeon.request('DELETE', `/templates/${template}`, { headers: s.auth }), 409, 'CONFLICT');
    for (const name of ['usage.start', 'usage.done']) {
      const events = await pigeon.request('GET', `/events/${name}/usage`, { headers: s.auth });
      expect(events.body.workflows).toEqual([{ id: wf.id, name: 'Usage flow' }]);
    }
    const field = await pigeon.request('GET', '/contacts/fields/data.plan/usage', { headers: s.auth });
    expect(field.body.workflows).toEqual([{ id: wf.id, name: 'Usage flow' }]);

    await track(pigeon, s.auth, `fields-${Date.now()}@example.com`, 'usage.start', { amount: 12, sku: 'x' });
    const fields = await pigeon.request('GET', '/workflows/fields?eventName=usage.start', { headers: s.auth });
    const names = fields.body.data.map((f: { field: string }) => f.field);
    expect(names).toEqual(
      expect.arrayContaining(['email', 'subscribed', 'event.amount', 'event.sku', 'event.usage.start']),
    );
    expect(fields.body.data.find((f: { field: string }) => f.field === 'event.amount')).toMatchObject({
      source: 'event',
      type: 'number',
    });

    await pigeon
      .request('DELETE', `/workflows/${wf.id}/steps/${wf.steps.mail}`, { headers: s.auth })
      .then((r) => expectEnvelope(r, 422, 'VALIDATION_ERROR'));
    await pigeon.request('PATCH', `/workflows/${wf.id}`, { headers: s.auth, body: { enabled: false } });
    await pigeon.request('POST', `/workflows/${wf.id}/executions/cancel-all`, { headers: s.auth });
    expect((await pigeon.request('DELETE', `/workflows/${wf.id}`, { headers: s.auth })).status).toBe(204);
    expect((await pigeon.request('DELETE', `/templates/${template}`, { headers: s.auth })).status).toBe(204);
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
    const segment = await pigeon.request('POST', '/segments', {
      headers: s.auth,
      body: {
        name: 'All',
        condition: { logic: 'AND', groups: [{ filters: [{ field: 'email', operator: 'exists' }] }] },
      },
    });
    expect(segment.status).toBe(201);
    const campaign = await pigeon.request('POST', '/campaigns', {
      headers: s.auth,
      body: {
        name: 'c',
        subject: 's',
        body: '<p>b</p>',
        from: s.from,
        audienceType: 'SEGMENT',
        segmentId: segment.body.id,
        templateId: template,
      },
    });
    expect(campaign.status).toBe(201);

    const cookie = { cookie: s.owner.cookie };
    const reset = await pigeon.request('POST', `/users/@me/projects/${s.project.id}/reset`, { headers: cookie });
    expect(reset.status, reset.text).toBe(200);
    for (const path of ['/workflows', '/segments']) {
      const res = await pigeon.request('GET', path, { headers: s.auth });
      expect(Array.isArray(res.body) ? res.body : res.body.data, path).toEqual([]);
    }
    expect((await pigeon.request('GET', '/campaigns', { headers: s.auth })).body.total).toBe(0);
    expect((await pigeon.request('GET', '/templates', { headers: s.auth })).body.total).toBe(0);

    const again = await createTemplate(pigeon, s.auth, { subject: 'Hi', body: '<p>hi</p>', from: s.from });
    await buildWorkflow(pigeon, s.auth, {
      trigger: 'delete.me',
      steps: [{ key: 'mail', type: 'SEND_EMAIL', config: { templateId: again } }],
      transitions: [],
    });
    const deleted = await pigeon.request('DELETE', `/users/@me/projects/${s.project.id}`, { headers: cookie });
    expect(deleted.status, deleted.text).toBeLessThan(300);
  });
});
