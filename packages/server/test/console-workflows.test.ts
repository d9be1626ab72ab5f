import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, hasChromium } from './chromium.js';
import { type ConsoleFixture, startConsole } from './console-session.js';
import { until } from './until.js';

/**
 * The console's workflow pages (issue 61) in Chromium against a real Pigeon whose mail lands in a
 * real SMTP sink: a workflow built in the console (trigger `signup`, a Delay, a Send email), enabled,
 * started by the customer's backend tracking the event, and followed on its execution page from the
 * Delay's timer to COMPLETED with the message in the sink; an enable refused by the API with its
 * reason shown on the step it names, then mended with a CONDITION branch.
 */

const WALKER = 'walker@workflows.example';

describe.skipIf(!hasChromium)('the console: workflows', () => {
  let c: ConsoleFixture;

  beforeAll(async () => {
    c = await startConsole();
  }, 60_000);
  afterAll(() => c?.stop());

  it('says how to start when there is no workflow', async () => {
    await c.open('workflows', 'Workflows');
    await c.page.getByRole('heading', { name: 'No workflow yet' }).waitFor();
    await checkPage(c.page, 'workflows-empty');
  });

  it('builds trigger → delay → send in the console, enables it, follows an execution to COMPLETED and cancels another', async () => {
    const { page } = c;
    const template = await c.sdk.templates.create({
      name: 'Welcome',
      from: c.from,
      subject: 'Welcome aboard',
      body: '<p>Glad you signed up.</p>',
    });

    await c.open('workflows', 'Workflows');
    await page.getByLabel('Name').fill('Onboarding');
    await page.getByLabel('Trigger event').fill('signup');
    await page.getByRole('button', { name: 'Create workflow' }).click();
    await page.getByRole('heading', { level: 1, name: 'Onboarding' }).waitFor();
    const workflowId = new URL(page.url()).pathname.split('/').at(-1) as string;

    // A Delay, its fields generated from the DELAY schema (amount, unit).
    await page.getByRole('button', { name: 'Add a step' }).click();
    const add = page.getByRole('form', { name: 'Add a step' });
    await add.getByLabel('Step type').selectOption('DELAY');
    await add.getByLabel('Step name (optional)').fill('Wait a moment');
    await add.getByLabel('Amount').fill('10');
    await add.getByLabel('Unit').selectOption('seconds');
    await add.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('heading', { level: 2, name: 'Delay: Wait a moment' }).waitFor();

    // A Send email after it (the selected step), its template picked by name.
    await page.getByRole('button', { name: 'Add a step' }).click();
    await add.getByLabel('Step type').selectOption('SEND_EMAIL');
    await add.getByLabel('Step name (optional)').fill('Say welcome');
    await add.getByLabel('Template').selectOption({ label: 'Welcome — Welcome aboard' });
    expect(await add.getByLabel('After').inputValue()).toMatch(/^[0-9a-f-]{36}\|$/); // after the Delay
    await add.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('heading', { level: 2, name: 'Send email: Say welcome' }).waitFor();

    // The graph reads top to bottom: the trigger, the Delay, the Send email, connected.
    const graph = page.getByRole('application', { name: 'The steps of Onboarding' });
    await graph.getByText('When “signup” is tracked').waitFor();
    await graph.getByRole('button', { name: /Delay\s*Wait a moment\s*Wait 10 seconds/ }).waitFor();
    await graph.getByRole('button', { name: /Send email\s*Say welcome\s*Welcome/ }).waitFor();
    // Edges are SVG groups, present rather than "visible" to Playwright.
    await graph.getByRole('img', { name: 'The trigger starts at Wait a moment' }).waitFor({ state: 'attached' });
    await graph.getByRole('img', { name: 'From Wait a moment to Say welcome' }).waitFor({ state: 'attached' });
    const stored = await c.sdk.workflows.get(workflowId);
    expect(stored.steps.map((s) => [s.type, s.config])).toEqual([
      ['DELAY', { amount: 10, unit: 'seconds' }],
      ['SEND_EMAIL', { templateId: template.id }],
    ]);
    expect(stored.transitions).toHaveLength(1);
    await checkPage(page, 'workflow-editor');

    await page.getByRole('button', { name: 'Enable' }).click();
    await page.locator('.page-header .chip', { hasText: 'enabled' }).waitFor();

    // The customer's backend tracks the trigger event; the execution shows up in the list.
    await c.sdk.events.track({ email: WALKER, event: 'signup' });
    const executions = page.getByRole('table', { name: 'Executions' });
    await executions.getByRole('link', { name: WALKER }).waitFor();
    await executions.getByRole('row').nth(1).getByRole('link').first().click();
    await page.getByRole('heading', { level: 1, name: 'Execution of Onboarding' }).waitFor();

    // At the Delay: its node marked, its wake-up time shown.
    const path = page.getByRole('application', { name: 'The path of this execution through Onboarding' });
    await path.locator('.wf-node.current', { hasText: 'Wait a moment' }).getByText('Here now').waitFor();
    await page.getByText('Wakes up').waitFor();
    await page.locator('.facts .chip', { hasText: 'WAITING' }).waitFor();
    await checkPage(page, 'workflow-execution-waiting');

    // It walks on by itself: the Delay ends, the email goes out, the execution completes.
    await page.locator('.facts .chip', { hasText: 'COMPLETED' }).waitFor({ timeout: 20_000 });
    await path.locator('.wf-node.passed', { hasText: 'Wait a moment' }).waitFor();
    await path.locator('.wf-node.passed', { hasText: 'Say welcome' }).waitFor();
    expect(await path.locator('.react-flow__edge.followed').count()).toBe(2); // trigger → delay → send
    const runs = page.getByRole('table', { name: 'Steps run, in order' });
    expect(await runs.getByRole('row').count()).toBe(3); // the heading row, the Delay, the Send email
    const mail = await until(
      () => c.sink.messages.find((m) => m.to.includes(WALKER)),
      (m) => m !== undefined,
    );
    expect(mail?.raw).toContain('Subject: Welcome aboard');
    await checkPage(page, 'workflow-execution');

    // Another contact's execution, cancelled from its page while it waits at the Delay.
    await c.sdk.events.track({ email: 'quitter@workflows.example', event: 'signup' });
    const [waiting] = (
      await until(
        () => c.sdk.workflows.executions.list(workflowId, { status: 'WAITING' }),
        (p) => p.data.length === 1,
      )
    ).data;
    await c.open(`workflows/${workflowId}/executions/${waiting?.id}`, 'Execution of Onboarding');
    await page.getByRole('button', { name: 'Cancel execution' }).click();
    await page
      .getByRole('dialog', { name: 'Cancel this execution?' })
      .getByText('It stops at “Wait a moment”')
      .waitFor();
    await page.getByRole('button', { name: 'Cancel the execution' }).click();
    await page.locator('.facts .chip', { hasText: 'CANCELLED' }).waitFor();
    expect(await page.getByRole('button', { name: 'Cancel execution' }).count()).toBe(0);
    expect(await c.sdk.workflows.executions.get(workflowId, waiting?.id ?? '')).toMatchObject({
      status: 'CANCELLED',
      nextRunAt: null,
    });
    expect(c.pageErrors).toEqual([]);
  });

  it('shows an enable refused by the API on the step it names, and enables once the CONDITION has both branches', async () => {
    const { page } = c;
    const template = await c.sdk.templates.create({
      name: 'Pro tips',
      from: c.from,
      subject: 'Tips for pros',
      body: '<p>Tips.</p>',
    });
    const workflow = await c.sdk.workflows.create({ name: 'Upgrade', triggerConfig: { eventName: 'upgrade' } });
    const check = await c.sdk.workflows.steps.add(workflow.id, {
      type: 'CONDITION',
      name: 'Is pro?',
      config: { field: 'data.plan', operator: 'equals', value: 'pro' },
    });
    const send = await c.sdk.workflows.steps.add(workflow.id, {
      type: 'SEND_EMAIL',
      name: 'Send tips',
      config: { templateId: template.id },
    });
    await c.sdk.workflows.transitions.add(workflow.id, { fromStepId: check.id, toStepId: send.id, branch: 'yes' });

    await c.open(`workflows/${workflow.id}`, 'Upgrade');
    const graph = page.getByRole('application', { name: 'The steps of Upgrade' });
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('alert').getByText('The workflow cannot be enabled').waitFor();
    // On the CONDITION step itself, in the graph and in its panel.
    const node = page.locator('.wf-node.has-problem');
    await node.getByText('needs both a "yes" and a "no" transition').waitFor();
    expect(await node.textContent()).toContain('Is pro?');
    await node.getByRole('button').click();
    const panel = page.getByRole('region', { name: 'Condition: Is pro?' });
    await panel.getByText('This step keeps the workflow from running').waitFor();
    // Its one filter (Plunk's shape) in the condition builder, as the tree it stands for.
    const builder = panel.getByRole('group', { name: 'Condition', exact: true });
    expect(await builder.getByLabel('Data key').inputValue()).toBe('plan');
    expect(await builder.getByLabel('Operator').inputValue()).toBe('equals');
    expect(await builder.getByLabel('Value', { exact: true }).inputValue()).toBe('pro');
    await checkPage(page, 'workflow-problem');
    await builder.getByLabel('Value', { exact: true }).fill('premium');
    await panel.getByRole('button', { name: 'Save step' }).click();
    await graph.getByText('1 filter').waitFor();
    expect((await c.sdk.workflows.get(workflow.id)).steps[0]?.config).toEqual({
      condition: {
        logic: 'AND',
        groups: [{ filters: [{ field: 'data.plan', operator: 'equals', value: 'premium' }] }],
      },
    });

    // An Exit on the "no" branch mends it.
    await page.getByRole('button', { name: 'Add a step' }).click();
    const add = page.getByRole('form', { name: 'Add a step' });
    await add.getByLabel('Step type').selectOption('EXIT');
    await add.getByLabel('Reason (optional)').fill('Not a pro');
    await add.getByLabel('After').selectOption({ label: 'Is pro? (no)' });
    await add.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('heading', { level: 2, name: 'Exit: Exit' }).waitFor();
    await graph.getByRole('img', { name: 'From Is pro? to Exit (no)' }).waitFor({ state: 'attached' });
    expect(await page.locator('.wf-node.has-problem').count()).toBe(0);
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.locator('.page-header .chip', { hasText: 'enabled' }).waitFor();
    expect((await c.sdk.workflows.get(workflow.id)).enabled).toBe(true);

    await c.open('workflows', 'Workflows');
    await page.getByRole('link', { name: 'Upgrade' }).waitFor();
    await checkPage(page, 'workflows');
  });

  it('adds steps of the other types through their generated forms, with the API’s and the form’s errors on their fields, and deletes one keeping the chain', async () => {
    const { page } = c;
    const workflow = await c.sdk.workflows.create({ name: 'Every step', triggerConfig: { eventName: 'paid' } });
    await c.open(`workflows/${workflow.id}`, 'Every step');
    const add = page.getByRole('form', { name: 'Add a step' });
    const addStep = async (type: string) => {
      await page.getByRole('button', { name: 'Add a step' }).click();
      await add.getByLabel('Step type').selectOption(type);
    };

    await addStep('WAIT_FOR_EVENT');
    await add.getByLabel('Event name').fill('paid-again');
    await add.getByLabel('Timeout (optional)').fill('3600');
    await add.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('heading', { level: 2, name: 'Wait for event: Wait for event' }).waitFor();

    await addStep('WEBHOOK');
    await add.getByLabel('URL').fill('ftp://hooks.example/pigeon');
    await add.getByLabel('Method (optional)').selectOption('PUT');
    await add.getByRole('button', { name: 'Add step' }).click();
    // The API's 422, under the field it names.
    await add
      .locator('.field', { has: page.getByLabel('URL') })
      .getByText('must be an http(s) URL')
      .waitFor();
    await add.getByLabel('URL').fill('https://hooks.example/pigeon');
    await add.getByLabel('Headers (optional)').fill('{"X-Token": ');
    await add.getByRole('button', { name: 'Add step' }).click();
    // JSON the form cannot read, under its field, before anything is sent.
    await add
      .locator('.field', { has: page.getByLabel('Headers (optional)') })
      .getByText(/^Not valid JSON/)
      .waitFor();
    await add.getByLabel('Headers (optional)').fill('{"X-Token": "abc"}');
    await add.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('heading', { level: 2, name: 'Webhook: Webhook' }).waitFor();

    await addStep('UPDATE_CONTACT');
    await add.getByLabel('Updates (optional)').fill('{"stage": "onboarded"}');
    await add.getByLabel('Subscription action (optional)').selectOption('unsubscribe');
    await add.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('heading', { level: 2, name: 'Update contact: Update contact' }).waitFor();

    await addStep('CONDITION');
    const builder = add.getByRole('group', { name: 'Condition', exact: true });
    await builder.getByLabel('Source').selectOption('data');
    await builder.getByLabel('Data key').fill('plan');
    await builder.getByLabel('Operator').selectOption('equals');
    await builder.getByLabel('Value', { exact: true }).fill('pro');
    // A step's condition may also read the trigger event's data (`event.<key>` compared with a value).
    await builder.getByRole('button', { name: 'Add condition to group 1' }).click();
    const total = builder.getByRole('group', { name: 'Condition 2 in group 1', exact: true });
    await total.getByLabel('Source').selectOption('trigger');
    await total.getByLabel('Trigger event key').fill('total');
    await total.getByLabel('Operator').selectOption('greaterThan');
    await total.getByLabel('Value', { exact: true }).fill('10');
    await add.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('heading', { level: 2, name: 'Condition: Condition' }).waitFor();

    const built = await c.sdk.workflows.get(workflow.id);
    const [wait, webhook, update, condition] = built.steps;
    expect(built.steps.map((s) => [s.type, s.config])).toEqual([
      ['WAIT_FOR_EVENT', { eventName: 'paid-again', timeout: 3600 }],
      ['WEBHOOK', { url: 'https://hooks.example/pigeon', method: 'PUT', headers: { 'X-Token': 'abc' } }],
      ['UPDATE_CONTACT', { updates: { stage: 'onboarded' }, subscriptionAction: 'unsubscribe' }],
      [
        'CONDITION',
        {
          condition: {
            logic: 'AND',
            groups: [
              {
                filters: [
                  { field: 'data.plan', operator: 'equals', value: 'pro' },
                  { field: 'event.total', operator: 'greaterThan', value: 10 },
                ],
              },
            ],
          },
        },
      ],
    ]);
    const chain = (w: typeof built) => w.transitions.map((t) => [t.fromStepId, t.toStepId, t.branch]);
    expect(chain(built)).toEqual([
      [wait?.id, webhook?.id, null],
      [webhook?.id, update?.id, null],
      [update?.id, condition?.id, null],
    ]);

    // Deleting the Webhook joins what led to it to what followed it.
    // By keyboard: a step of the graph is a button.
    await page.getByRole('button', { name: /^Webhook\s*Webhook/ }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 2, name: 'Webhook: Webhook' }).waitFor();
    await page.getByRole('button', { name: 'Delete step' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete “Webhook”?' });
    expect(await dialog.getByLabel('Connect the steps before it to the step after it').isChecked()).toBe(true);
    await dialog.getByRole('button', { name: 'Delete the step' }).click();
    await page.getByRole('heading', { level: 2, name: 'Workflow' }).waitFor();
    expect(chain(await c.sdk.workflows.get(workflow.id))).toEqual([
      [wait?.id, update?.id, null],
      [update?.id, condition?.id, null],
    ]);
    await checkPage(page, 'workflow-steps');
  });
});
