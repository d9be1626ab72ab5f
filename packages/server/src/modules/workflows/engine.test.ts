import { describe, expect, it } from 'vitest';
import { api, bodyOf } from '../../../test/api.js';
import { setDomainsVerified } from '../../../test/fixtures/domains.js';
import { expectEnvelope } from '../../../test/helpers.js';
import { parseMessage } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { buildWorkflow, createTemplate, executionDetail, executionsOf, track, until } from '../../../test/workflows.js';
import { queryRows, sql } from '../../db/query.js';

const { pigeon, sink, dns } = await startMailingPigeon({ CHANGE_FEED_POLL_MS: '20', WORKFLOW_POLL_MS: '50' });

type Setup = Awaited<ReturnType<typeof verifiedSender>>;
const received = (to: string) => sink.messages.filter((m) => m.to.includes(to));
const waitForStatus = (s: Setup, wf: string, count: number, status: string, timeoutMs = 15_000) =>
  until(
    () => executionsOf(pigeon, s.auth, wf),
    (list) => list.filter((e) => e.status === status).length >= count,
    timeoutMs,
  );
async function contactOf(s: Setup, email: string) {
  const client = api(pigeon, s.auth);
  const found = bodyOf(await client.contacts.lookup({ body: { emails: [email] } }), 200);
  const id = found.found[0]?.id ?? `no contact ${email}`;
  return bodyOf(await client.contacts.get({ params: { id } }), 200);
}

describe('execution engine', () => {
  it('a tracked event starts CONDITION → SEND_EMAIL → EXIT; the other branch updates the contact', async () => {
    const s = await verifiedSender(pigeon, dns);
    const template = await createTemplate(pigeon, s.auth, {
      subject: 'Welcome {{firstName ?? "friend"}}',
      body: '<p>Plan {{data.plan}}, order {{event.orderId}}</p>',
      from: s.from,
      type: 'TRANSACTIONAL',
    });
    const wf = await buildWorkflow(pigeon, s.auth, {
      trigger: 'order.placed',
      steps: [
        { key: 'pro?', type: 'CONDITION', config: { field: 'data.plan', operator: 'equals', value: 'pro' } },
        { key: 'mail', type: 'SEND_EMAIL', config: { templateId: template } },
        { key: 'bye', type: 'EXIT', config: { reason: 'mailed' } },
        { key: 'tag', type: 'UPDATE_CONTACT', config: { updates: { nudged: true, lastOrder: '{{event.orderId}}' } } },
      ],
      transitions: [
        ['pro?', 'mail', 'yes'],
        ['pro?', 'tag', 'no'],
        ['mail', 'bye'],
      ],
    });
    const pro = `pro-${Date.now()}@example.com`;
    const free = `free-${Date.now()}@example.com`;
    const client = api(pigeon, s.auth);
    await client.contacts.create({ body: { email: pro, data: { plan: 'pro', firstName: 'Ada' } } });
    await client.contacts.create({ body: { email: free, data: { plan: 'free' } } });
    await track(pigeon, s.auth, pro, 'order.placed', { orderId: 'A-1' });
    await track(pigeon, s.auth, free, 'order.placed', { orderId: 'B-2' });

    const list = await until(
      () => executionsOf(pigeon, s.auth, wf.id),
      (l) => l.length === 2 && l.every((e) => e.status === 'EXITED' || e.status === 'COMPLETED'),
    );
    const byContact = new Map(list.map((e) => [e.contactId, e]));
    const proContact = await contactOf(s, pro);
    const freeContact = await contactOf(s, free);
    expect(byContact.get(proContact.id)).toMatchObject({
      status: 'EXITED',
      exitReason: 'mailed',
      currentStepId: wf.steps.bye,
    });
    expect(byContact.get(freeContact.id)).toMatchObject({ status: 'COMPLETED', exitReason: null });

    const mail = parseMessage(
      ((await sink.waitFor(1)) &&
        (await until(
          () => received(pro),
          (m) => m.length > 0,
        )))[0]?.raw ?? '',
    );
    expect(mail.headers.get('subject')).toBe('Welcome Ada');
    expect(mail.text).toContain('Plan pro, order A-1');
    expect(received(free)).toHaveLength(0);
    expect(freeContact.data).toMatchObject({ plan: 'free', nudged: true, lastOrder: 'B-2' });

    const detail = await executionDetail(pigeon, s.auth, wf.id, byContact.get(proContact.id)?.id as string);
    expect(detail.steps.map((r) => [r.stepType, r.status])).toEqual([
      ['CONDITION', 'COMPLETED'],
      ['SEND_EMAIL', 'COMPLETED'],
      ['EXIT', 'COMPLETED'],
    ]);
    expect(detail.steps[0]?.output).toEqual({ result: true });
    expect(detail.context).toMatchObject({ event: { orderId: 'A-1' }, eventName: 'order.placed' });
    const emailId = detail.steps[1]?.output?.emailId as string;
    const rows = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT priority, source, workflow_execution_id FROM emails WHERE id = ${emailId}`,
    );
    expect(rows[0]).toEqual({ priority: 1, source: 'WORKFLOW', workflow_execution_id: detail.id });
  });

  it('DELAY waits durably (WAITING with its due time, listed as upcoming), then goes on', async () => {
    const s = await verifiedSender(pigeon, dns);
    const wf = await buildWorkflow(pigeon, s.auth, {
      trigger: 'delay.me',
      steps: [
        { key: 'wait', type: 'DELAY', config: { amount: 2, unit: 'seconds' } },
        { key: 'tag', type: 'UPDATE_CONTACT', config: { updates: { delayed: 'yes' } } },
      ],
      transitions: [['wait', 'tag']],
    });
    const email = `delay-${Date.now()}@example.com`;
    await track(pigeon, s.auth, email, 'delay.me');
    const [waiting] = await waitForStatus(s, wf.id, 1, 'WAITING');
    expect(waiting).toMatchObject({ status: 'WAITING', currentStepId: wf.steps.wait, waitingFor: null });
    expect(Date.parse(String(waiting?.nextRunAt)) - Date.now()).toBeGreaterThan(500);
    const upcoming = await api(pigeon, s.auth).activity.upcoming();
    expect(bodyOf(upcoming, 200).data).toContainEqual(
      expect.objectContaining({
        type: 'workflow',
        id: waiting?.id,
        workflowId: wf.id,
        step: expect.objectContaining({ type: 'DELAY' }),
      }),
    );
    expect((await contactOf(s, email)).data.delayed).toBeUndefined();
    await waitForStatus(s, wf.id, 1, 'COMPLETED');
    expect((await contactOf(s, email)).data.delayed).toBe('yes');
    const detail = await executionDetail(pigeon, s.auth, wf.id, waiting?.id as string);
    expect(detail.steps.map((r) => [r.stepType, r.status])).toEqual([
      ['DELAY', 'COMPLETED'],
      ['UPDATE_CONTACT', 'COMPLETED'],
    ]);
  });

  it('WAIT_FOR_EVENT follows "event" with the event’s data, or "timeout"', async () => {
    const s = await verifiedSender(pigeon, dns);
    const template = await createTemplate(pigeon, s.auth, {
      subject: 'Thanks for {{event.item}}',
      body: '<p>You bought {{event.item}}</p>',
      from: s.from,
      type: 'TRANSACTIONAL',
    });
    const wf = await buildWorkflow(pigeon, s.auth, {
      trigger: 'cart.started',
      steps: [
        { key: 'wait', type: 'WAIT_FOR_EVENT', config: { eventName: 'cart.paid', timeout: 2 } },
        { key: 'thanks', type: 'SEND_EMAIL', config: { templateId: template } },
        { key: 'remind', type: 'UPDATE_CONTACT', config: { updates: { reminded: true } } },
      ],
      transitions: [
        ['wait', 'thanks', 'event'],
        ['wait', 'remind', 'timeout'],
      ],
    });
    const payer = `payer-${Date.now()}@example.com`;
    const idler = `idler-${Date.now()}@example.com`;
    await track(pigeon, s.auth, payer, 'cart.started');
    await track(pigeon, s.auth, idler, 'cart.started');
    await waitForStatus(s, wf.id, 2, 'WAITING');
    const list = await executionsOf(pigeon, s.auth, wf.id);
    expect(list.every((e) => e.waitingFor === 'cart.paid')).toBe(true);
    await track(pigeon, s.auth, payer, 'cart.paid', { item: 'a teapot' });

    const done = await waitForStatus(s, wf.id, 2, 'COMPLETED');
    const payerId = (await contactOf(s, payer)).id;
    const payerExec = done.find((e) => e.contactId === payerId);
    const detail = await executionDetail(pigeon, s.auth, wf.id, payerExec?.id as string);
    expect(detail.steps.map((r) => [r.stepType, r.status])).toEqual([
      ['WAIT_FOR_EVENT', 'COMPLETED'],
      ['SEND_EMAIL', 'COMPLETED'],
    ]);
    expect(detail.steps[0]?.output).toMatchObject({
      branch: 'event',
      eventName: 'cart.paid',
      event: { item: 'a teapot' },
    });
    const mail = await until(
      () => received(payer),
      (m) => m.length > 0,
    );
    expect(parseMessage(mail[0]?.raw ?? '').headers.get('subject')).toBe('Thanks for a teapot');
    expect((await contactOf(s, idler)).data.reminded).toBe(true);
    expect(received(idler)).toHaveLength(0);
  });

  it('re-entry: never again without allowReentry; with it, only once the previous execution ended', async () => {
    const s = await verifiedSender(pigeon, dns);
    const once = await buildWorkflow(pigeon, s.auth, {
      trigger: 'ping',
      steps: [{ key: 'tag', type: 'UPDATE_CONTACT', config: { updates: { pinged: true } } }],
      transitions: [],
    });
    const again = await buildWorkflow(pigeon, s.auth, {
      trigger: 'ping',
      allowReentry: true,
      steps: [{ key: 'wait', type: 'DELAY', config: { amount: 1, unit: 'seconds' } }],
      transitions: [],
    });
    const email = `reentry-${Date.now()}@example.com`;
    await track(pigeon, s.auth, email, 'ping');
    await waitForStatus(s, once.id, 1, 'COMPLETED');
    await waitForStatus(s, again.id, 1, 'WAITING');
    await track(pigeon, s.auth, email, 'ping'); // while `again` waits: no second execution
    await new Promise((r) => setTimeout(r, 500));
    expect(await executionsOf(pigeon, s.auth, once.id)).toHaveLength(1);
    expect(await executionsOf(pigeon, s.auth, again.id)).toHaveLength(1);
    await waitForStatus(s, again.id, 1, 'COMPLETED');
    await track(pigeon, s.auth, email, 'ping'); // `again` finished: a new one; `once` never again
    await until(
      () => executionsOf(pigeon, s.auth, again.id),
      (l) => l.length === 2,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(await executionsOf(pigeon, s.auth, again.id)).toHaveLength(2);
    expect(await executionsOf(pigeon, s.auth, once.id)).toHaveLength(1);

    const contactId = (await contactOf(s, email)).id;
    const manual = await api(pigeon, s.auth).workflows.startExecution({ params: { id: once.id }, body: { contactId } });
    expect(expectEnvelope(manual, 409, 'CONFLICT').message).toContain('re-entry');
  });

  it('cancel stops a waiting execution and its timer; cancel-all ends the rest; delete needs none active', async () => {
    const s = await verifiedSender(pigeon, dns);
    const wf = await buildWorkflow(pigeon, s.auth, {
      trigger: 'slow',
      steps: [
        { key: 'wait', type: 'DELAY', config: { amount: 1, unit: 'seconds' } },
        { key: 'tag', type: 'UPDATE_CONTACT', config: { updates: { late: true } } },
      ],
      transitions: [['wait', 'tag']],
    });
    const a = `cancel-a-${Date.now()}@example.com`;
    const b = `cancel-b-${Date.now()}@example.com`;
    await track(pigeon, s.auth, a, 'slow');
    await track(pigeon, s.auth, b, 'slow');
    const waiting = await waitForStatus(s, wf.id, 2, 'WAITING');
    const aId = (await contactOf(s, a)).id;
    const first = waiting.find((e) => e.contactId === aId);

    const workflows = api(pigeon, s.auth).workflows;
    const blocked = await workflows.delete({ params: { id: wf.id } });
    expectEnvelope(blocked, 409, 'CONFLICT');
    const execution = { id: wf.id, executionId: first?.id ?? 'no execution of a' };
    const cancelled = await workflows.cancelExecution({ params: execution });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'CANCELLED', nextRunAt: null });
    const twice = await workflows.cancelExecution({ params: execution });
    expectEnvelope(twice, 409, 'CONFLICT');
    const all = await workflows.cancelAll({ params: { id: wf.id } });
    expect(all.body).toEqual({ cancelled: 1 });

    await new Promise((r) => setTimeout(r, 1800)); // past the delay: nothing may run
    expect((await contactOf(s, a)).data.late).toBeUndefined();
    expect((await contactOf(s, b)).data.late).toBeUndefined();
    const detail = await executionDetail(pigeon, s.auth, wf.id, first?.id as string);
    expect(detail.steps).toEqual([expect.objectContaining({ stepType: 'DELAY', status: 'CANCELLED' })]);
    const rows = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT count(*)::int AS n FROM workflow_executions WHERE workflow_id = ${wf.id} AND wake_at IS NOT NULL`,
    );
    expect(rows[0]?.n).toBe(0);
    expect((await workflows.delete({ params: { id: wf.id } })).status).toBe(204);
  });

  it('MARKETING mail skips unsubscribed contacts and says why; UPDATE_CONTACT subscribes with its event', async () => {
    const s = await verifiedSender(pigeon, dns);
    const news = await createTemplate(pigeon, s.auth, {
      subject: 'News',
      body: '<p>news</p>',
      from: s.from,
      type: 'MARKETING',
    });
    const wf = await buildWorkflow(pigeon, s.auth, {
      trigger: 'optin.check',
      steps: [
        { key: 'news', type: 'SEND_EMAIL', config: { templateId: news } },
        { key: 'sub', type: 'UPDATE_CONTACT', config: { subscriptionAction: 'subscribe' } },
      ],
      transitions: [['news', 'sub']],
    });
    const email = `marketing-${Date.now()}@example.com`;
    await track(pigeon, s.auth, email, 'optin.check', undefined, false);
    const [done] = await waitForStatus(s, wf.id, 1, 'COMPLETED');
    const detail = await executionDetail(pigeon, s.auth, wf.id, done?.id as string);
    expect(detail.steps[0]).toMatchObject({
      stepType: 'SEND_EMAIL',
      status: 'SKIPPED',
      output: { reason: 'unsubscribed' },
    });
    const contact = await contactOf(s, email);
    expect(contact.subscribed).toBe(true);
    const events = await api(pigeon, s.auth).events.byContact({ params: { contactId: contact.id } });
    expect(bodyOf(events, 200).data).toContainEqual(
      expect.objectContaining({ name: 'contact.subscribed', data: expect.objectContaining({ source: 'workflow' }) }),
    );
    expect(received(email)).toHaveLength(0);
  });

  it('a manual start takes a context (workflow.*) and a CONDITION can read it; CUSTOM recipients get the mail', async () => {
    const s = await verifiedSender(pigeon, dns);
    const note = await createTemplate(pigeon, s.auth, {
      subject: 'Lead {{email}} scored {{workflow.score}}',
      body: '<p>{{email}}</p>',
      from: s.from,
      type: 'TRANSACTIONAL',
    });
    const wf = await buildWorkflow(pigeon, s.auth, {
      trigger: 'never.tracked',
      enable: false,
      steps: [
        {
          key: 'hot?',
          type: 'CONDITION',
          config: {
            condition: {
              logic: 'AND',
              groups: [{ filters: [{ field: 'workflow.score', operator: 'greaterThan', value: 50 }] }],
            },
          },
        },
        {
          key: 'tell',
          type: 'SEND_EMAIL',
          config: { templateId: note, recipient: { type: 'CUSTOM', customEmail: 'sales@example.org' } },
        },
        { key: 'cold', type: 'EXIT' },
      ],
      transitions: [
        ['hot?', 'tell', 'yes'],
        ['hot?', 'cold', 'no'],
      ],
    });
    const email = `lead-${Date.now()}@example.com`;
    const client = api(pigeon, s.auth);
    const created = await client.contacts.create({ body: { email } });
    const start = await client.workflows.startExecution({
      params: { id: wf.id },
      body: { contactId: bodyOf(created, 201).id, context: { score: 80 } },
    });
    expect(start.status, JSON.stringify(start.body)).toBe(201);
    expect(start.body).toMatchObject({ status: 'RUNNING', context: { workflow: { score: 80 } } });
    await waitForStatus(s, wf.id, 1, 'COMPLETED');
    const mail = await until(
      () => received('sales@example.org'),
      (m) => m.some((x) => x.raw.includes(email)),
    );
    expect(parseMessage(mail.find((x) => x.raw.includes(email))?.raw ?? '').headers.get('subject')).toBe(
      `Lead ${email} scored 80`,
    );
  });

  it('a step that cannot run (unverified sender) fails the execution with the reason', async () => {
    const s = await verifiedSender(pigeon, dns);
    const template = await createTemplate(pigeon, s.auth, { subject: 'x', body: '<p>x</p>', from: s.from });
    const wf = await buildWorkflow(pigeon, s.auth, {
      trigger: 'doomed',
      steps: [{ key: 'mail', type: 'SEND_EMAIL', config: { templateId: template } }],
      transitions: [],
    });
    await setDomainsVerified(pigeon.deps.db.pool, s.project.id, false);
    await track(pigeon, s.auth, `doomed-${Date.now()}@example.com`, 'doomed');
    const [failed] = await waitForStatus(s, wf.id, 1, 'FAILED');
    expect(String(failed?.exitReason)).toContain('not verified');
    const detail = await executionDetail(pigeon, s.auth, wf.id, failed?.id as string);
    expect(detail.steps[0]).toMatchObject({ status: 'FAILED', error: expect.stringContaining('not verified') });
  });

  it('segment entry events trigger workflows', async () => {
    const s = await verifiedSender(pigeon, dns);
    const segment = await api(pigeon, s.auth).segments.create({
      body: {
        name: 'Big spenders',
        trackMembership: true,
        condition: {
          logic: 'AND',
          groups: [{ filters: [{ field: 'data.spent', operator: 'greaterThan', value: 100 }] }],
        },
      },
    });
    expect(segment.status, JSON.stringify(segment.body)).toBe(201);
    const wf = await buildWorkflow(pigeon, s.auth, {
      trigger: `segment.${bodyOf(segment, 201).slug}.entry`,
      steps: [{ key: 'vip', type: 'UPDATE_CONTACT', config: { updates: { vip: true } } }],
      transitions: [],
    });
    const email = `vip-${Date.now()}@example.com`;
    await track(pigeon, s.auth, email, 'purchase', { spent: 500 });
    await waitForStatus(s, wf.id, 1, 'COMPLETED');
    expect((await contactOf(s, email)).data.vip).toBe(true);
  });
});
