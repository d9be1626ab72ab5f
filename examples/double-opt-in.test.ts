import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newProject, outboxMessages } from '../packages/server/test/accounts.js';
import { startTestPigeon, type TestPigeon } from '../packages/server/test/helpers.js';
import { until } from '../packages/server/test/workflows.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  // The local outbox, as on the embedded defaults: the sender domain is verified at once.
  pigeon = await startTestPigeon({ env: { CHANGE_FEED_POLL_MS: '20', WORKFLOW_POLL_MS: '50' } });
});
afterAll(() => pigeon?.stop());

const run = (project: { secretKey: string }, email: string, remindAfter = '3600') =>
  promisify(execFile)(process.execPath, [fileURLToPath(new URL('./double-opt-in.mjs', import.meta.url)), email], {
    env: {
      PATH: process.env.PATH,
      PIGEON_URL: pigeon.url,
      PIGEON_SECRET_KEY: project.secretKey,
      REMIND_AFTER: remindAfter,
    },
  });
const mailTo = (email: string) => outboxMessages(pigeon).filter((m) => m.includes(`To: ${email}`));
const subjectsTo = (email: string) => mailTo(email).map((m) => /^Subject: (.*)$/m.exec(m)?.[1]);

it("runs the double opt-in example: the confirmation page's button subscribes, and the welcome follows", async () => {
  const { project } = await newProject(pigeon);
  const ada = `ada-${Date.now()}@example.com`;
  const first = await run(project, ada);
  expect(first.stdout).toContain('workflows "Double opt-in" and "Welcome" are enabled');
  expect(first.stdout).toContain(`${ada} signed up`);
  const [confirmation] = await until(
    () => mailTo(ada),
    (m) => m.length > 0,
  );
  expect(confirmation).toContain('Subject: Please confirm your subscription');
  const link = /href="([^"]*\/subscribe\/[^"]+)"/.exec(confirmation ?? '')?.[1]?.replace(/&amp;/g, '&');
  expect(link).toBeDefined();
  expect(await (await fetch(link as string)).text()).toContain('Yes, subscribe me');
  const pressed = await fetch(link as string, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
    body: 'action=subscribe',
  });
  expect(pressed.status).toBe(200);
  await until(
    () => subjectsTo(ada),
    (s) => s.includes('Welcome aboard'),
  );
  expect(subjectsTo(ada)).toEqual(['Please confirm your subscription', 'Welcome aboard']);

  // A second run reuses the workflows and only signs the next address up.
  const bob = `bob-${Date.now()}@example.com`;
  const second = await run(project, bob);
  expect(second.stdout).not.toContain('are enabled');
  await until(
    () => subjectsTo(bob),
    (s) => s.length > 0,
  );
  expect(subjectsTo(bob)).toEqual(['Please confirm your subscription']);
}, 60_000);
