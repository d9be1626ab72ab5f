import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newProject } from '../packages/server/test/accounts.js';
import { startTestPigeon, type TestPigeon } from '../packages/server/test/helpers.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

it('runs the quickstart against a real server', async () => {
  const { project } = await newProject(pigeon);
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [fileURLToPath(new URL('./quickstart.mjs', import.meta.url))],
    {
      env: {
        PATH: process.env.PATH,
        PIGEON_URL: pigeon.url,
        PIGEON_PUBLIC_KEY: project.publicKey,
        PIGEON_SECRET_KEY: project.secretKey,
        PIGEON_DATA_DIR: '/srv/pigeon-data/',
      },
    },
  );
  expect(stdout).toContain('added sender domain pigeon.local (verified)');
  expect(stdout).toContain('sign in with the owner login in /srv/pigeon-data/first-run.txt');
  const emailId = /sent email ([0-9a-f-]{36}) from hello@pigeon\.local/.exec(stdout)?.[1];
  expect(stdout).toContain(`see it at ${pigeon.url}/outbox`);
  const { rows } = await pigeon.deps.db.pool.query('SELECT subject, html FROM emails WHERE id = $1', [emailId]);
  expect(rows[0]).toMatchObject({ subject: 'Hello from Pigeon', html: expect.stringContaining('<h1>It works</h1>') });
  expect(stdout).toContain('ada: subscribed=true plan=pro');
  expect(stdout).toContain('import completed: 2 created, 0 updated, 0 skipped');
  expect(stdout).toContain('4 contacts'); // you@ (the email), ada, grace, linus
  expect(stdout).toContain('reserved names are refused: 422 VALIDATION_ERROR (reserved_event)');
});
