import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConditionTree } from '../../sdk/dist/index.js';
import { checkPage, hasChromium } from './chromium.js';
import { type ConsoleFixture, startConsole } from './console-session.js';
import { until } from './until.js';

/**
 * The console's pages for the people who write the mail (issue 61): templates (editor, Markdown,
 * live preview through the server's renderer with a contact's data, image upload, usage, the 409
 * of a used template) and segments (the condition builder with nested groups, its live count, the
 * member list) in Debian's Chromium, with axe-core and screenshots at both widths.
 */

/** A 1×1 PNG. */
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

describe.skipIf(!hasChromium)('the console: templates and segments', () => {
  let c: ConsoleFixture;
  beforeAll(async () => {
    c = await startConsole();
  }, 60_000);
  afterAll(() => c?.stop());

  it('writes a template in Markdown with a live preview filled with a chosen contact’s data, uploads an image, and saves HTML', async () => {
    const { page, sdk } = c;
    await sdk.contacts.create({ email: 'ada@readers.example', data: { firstName: 'Ada' } });
    await c.open('templates', 'Templates');
    await page.getByText('No template yet').waitFor();
    await checkPage(page, 'templates-empty');
    await page.getByRole('link', { name: 'New template' }).click();
    await page.getByRole('heading', { level: 1, name: 'New template' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Welcome');
    await page.getByLabel('From', { exact: true }).fill(c.from);
    await page.getByLabel('Subject').fill('Hi {{firstName}}');
    await page.getByRole('radio', { name: 'Markdown' }).check();
    await page.getByLabel('Body (Markdown)').fill('# Hello {{firstName}}\n\nYour plan: {{plan}}.\n\n');
    // Without a contact, both variables are missing, as /v1/send would warn.
    await page.getByText('{{firstName}} had no value').waitFor();
    await page.getByText('{{plan}} had no value').waitFor();
    await page.getByLabel('Preview as (contact email)').fill('ada@readers.example');
    await page.getByText("With ada@readers.example's data.").waitFor();
    await page.getByText('Subject: Hi Ada').waitFor();
    const frame = page.frameLocator('iframe[title="Preview of the message"]');
    await frame.getByRole('heading', { name: 'Hello Ada' }).waitFor();
    expect(await page.getByText('{{firstName}} had no value').count()).toBe(0);
    await page.getByText('{{plan}} had no value').waitFor();
    await page.getByLabel('Body (Markdown)').press('End');
    await page.getByLabel('Insert an image at the cursor').setInputFiles({
      name: 'pixel.png',
      mimeType: 'image/png',
      buffer: PIXEL,
    });
    await until(
      () => page.getByLabel('Body (Markdown)').inputValue(),
      (body) => /!\[\]\(http[^)]+\)/.test(body),
    );
    await checkPage(page, 'template-editor');
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { level: 1, name: 'Welcome' }).waitFor();
    const id = new URL(page.url()).pathname.split('/').pop() ?? '';
    const saved = await sdk.templates.get(id);
    expect(saved).toMatchObject({ name: 'Welcome', subject: 'Hi {{firstName}}', from: c.from, type: 'MARKETING' });
    // Markdown is saved as the HTML the server made of it, image included.
    expect(saved.body).toContain('<h1>Hello {{firstName}}</h1>');
    expect(saved.body).toMatch(/<img src="http[^"]+\/uploads\/[^"]+"/);
    await page.getByText('No campaign or workflow uses this template yet.').waitFor();
    await checkPage(page, 'template');
  });

  it('lists templates with their usage, duplicates one, and explains why a template a workflow sends cannot be deleted', async () => {
    const { page, sdk } = c;
    const [template] = (await sdk.templates.list({ search: 'Welcome' })).data;
    if (!template) throw new Error('the template of the first test is missing');
    const workflow = await sdk.workflows.create({ name: 'Onboarding', triggerConfig: { eventName: 'signup' } });
    await sdk.workflows.steps.add(workflow.id, {
      type: 'SEND_EMAIL',
      name: 'Say hello',
      config: { templateId: template.id },
    });
    await c.open('templates', 'Templates');
    const row = page.getByRole('row', { name: /Welcome/ });
    await row.getByText('0 campaigns, 1 workflow step').waitFor();
    await checkPage(page, 'templates');
    await row.getByRole('link', { name: 'Welcome' }).click();
    await page.getByRole('heading', { level: 1, name: 'Welcome' }).waitFor();
    await page.getByRole('link', { name: 'Say hello' }).waitFor();
    await page.getByRole('button', { name: 'Duplicate' }).click();
    await page.getByRole('heading', { level: 1, name: 'Welcome (copy)' }).waitFor();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete template' }).click();
    await page.getByRole('heading', { level: 1, name: 'Templates' }).waitFor();
    expect((await sdk.templates.list({ search: 'Welcome' })).data.map((t) => t.name)).toEqual(['Welcome']);
    await c.open(`templates/${template.id}`, 'Welcome');
    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Delete template' }).click();
    await dialog.getByText('It cannot be deleted while workflow steps send it').waitFor();
    await checkPage(page, 'template-delete-refused');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await sdk.templates.get(template.id)).name).toBe('Welcome');
  });

  it('builds a segment with nested groups whose live count matches POST /segments with the same tree, and lists its members', async () => {
    const { page, sdk } = c;
    const people = [
      { email: 'a@shop.example', data: { plan: 'pro', seats: 5 } },
      { email: 'b@shop.example', data: { plan: 'pro', seats: 1 } },
      { email: 'c@shop.example', data: { plan: 'pro', seats: 1 } },
      { email: 'd@shop.example', data: { plan: 'free', seats: 10 } },
      { email: 'e@shop.example', data: { plan: 'pro' } },
    ];
    for (const person of people) await sdk.contacts.create(person);
    for (const email of ['b@shop.example', 'd@shop.example', 'e@shop.example']) {
      await sdk.events.track({ email, event: 'purchase' });
    }
    await c.open('segments', 'Segments');
    await checkPage(page, 'segments-empty');
    await page.getByRole('link', { name: 'New segment' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Engaged pro accounts');
    const first = page.getByRole('group', { name: 'Condition 1 in group 1', exact: true });
    await first.getByLabel('Source').selectOption('data');
    await first.getByLabel('Data key').fill('plan');
    await first.getByLabel('Value', { exact: true }).fill('pro');
    await page.getByText('4 contacts match now').waitFor(); // a, b, c, e
    await page.getByRole('button', { name: 'Nest groups in group 1' }).click();
    const seats = page.getByRole('group', { name: 'Condition 1 in group 1.1', exact: true });
    await seats.getByLabel('Source').selectOption('data');
    await seats.getByLabel('Data key').fill('seats');
    await seats.getByLabel('Operator').selectOption('greaterThan');
    await seats.getByLabel('Value', { exact: true }).fill('2');
    await page.getByRole('button', { name: 'Add group in group 1' }).click();
    const bought = page.getByRole('group', { name: 'Condition 1 in group 1.2', exact: true });
    await bought.getByLabel('Source').selectOption('event');
    await bought.getByLabel('Event name').fill('purchase');
    await expect(bought.getByLabel('Operator').inputValue()).resolves.toBe('triggered');
    await page.getByText('3 contacts match now').waitFor(); // pro and (more than 2 seats or bought): a, b, e
    await checkPage(page, 'segment-builder');
    await page.getByRole('button', { name: 'Create segment' }).click();
    await page.getByRole('heading', { level: 1, name: 'Engaged pro accounts' }).waitFor();
    const id = new URL(page.url()).pathname.split('/').pop() ?? '';
    const tree: ConditionTree = {
      logic: 'AND',
      groups: [
        {
          filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }],
          conditions: {
            logic: 'OR',
            groups: [
              { filters: [{ field: 'data.seats', operator: 'greaterThan', value: 2 }] },
              { filters: [{ field: 'event.purchase', operator: 'triggered' }] },
            ],
          },
        },
      ],
    };
    expect((await sdk.segments.get(id)).condition).toEqual(tree);
    const byApi = await sdk.segments.create({ name: 'Same tree through the API', condition: tree });
    expect(byApi.memberCount).toBe(3);
    const members = page.getByRole('table', { name: 'Members of the segment' });
    for (const email of ['a@shop.example', 'b@shop.example', 'e@shop.example']) {
      await members.getByRole('link', { name: email }).waitFor();
    }
    expect(await members.getByRole('row').count()).toBe(4); // the header and three members
    await checkPage(page, 'segment');
    await c.open('segments', 'Segments');
    await page
      .getByRole('row', { name: /Engaged pro accounts/ })
      .getByText('3', { exact: true })
      .waitFor();
    await checkPage(page, 'segments');
    // The refused delete of the second test is the one error the pages logged (its 409).
    expect(c.pageErrors.filter((e) => !e.includes('status of 409'))).toEqual([]);
  });
});
