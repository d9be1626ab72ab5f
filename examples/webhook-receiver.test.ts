import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newProject } from '../packages/server/test/accounts.js';
import { startTestPigeon, type TestPigeon } from '../packages/server/test/helpers.js';
import { until } from '../packages/server/test/workflows.js';

let pigeon: TestPigeon;
let child: ChildProcess | undefined;
beforeAll(async () => {
  pigeon = await startTestPigeon({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_MS: '50' } });
});
afterAll(async () => {
  child?.kill('SIGTERM');
  await pigeon?.stop();
});

it('registers itself, verifies genuine webhooks, handles a replay once and refuses a forged one', async () => {
  const { project, auth } = await newProject(pigeon);
  child = spawn(process.execPath, [fileURLToPath(new URL('./webhook-receiver.mjs', import.meta.url))], {
    env: { PATH: process.env.PATH, PIGEON_URL: pigeon.url, PIGEON_SECRET_KEY: project.secretKey, PORT: '0' },
  });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  const lines = () => out.trim().split('\n');
  await until(lines, (l) => l.some((x) => x.startsWith('registered endpoint ')));
  const url = /listening on (\S+)/.exec(out)?.[1] ?? '';
  const endpointId = /registered endpoint (\S+)/.exec(out)?.[1] ?? '';

  const test = await pigeon.request('POST', `/webhook-endpoints/${endpointId}/test`, { headers: auth, body: {} });
  expect(test.status).toBe(202);
  await until(lines, (l) => l.includes(`webhook.test ${endpointId}`));
  await pigeon.request('POST', '/v1/track', { headers: auth, body: { email: 'ada@example.com', event: 'signed-up' } });
  await until(lines, (l) => l.includes('signed-up ada@example.com'));

  // A replay is the same delivery (same webhook-id): verified, answered 204, handled once.
  const replay = await pigeon.request('POST', `/webhook-endpoints/${endpointId}/deliveries/${test.body.id}/replay`, {
    headers: auth,
    body: {},
  });
  expect(replay.status).toBe(202);
  const deliveries = await until(
    async () =>
      (await pigeon.request('GET', `/webhook-endpoints/${endpointId}/deliveries/${test.body.id}`, { headers: auth }))
        .body,
    (d) => d.attempts.length === 2,
  );
  expect(deliveries.attempts.map((a: { statusCode: number }) => a.statusCode)).toEqual([204, 204]);

  const forged = await fetch(url, {
    method: 'POST',
    headers: {
      'webhook-id': 'msg_forged',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,AAAA',
    },
    body: JSON.stringify({ type: 'email.bounce', timestamp: new Date().toISOString(), data: {} }),
  });
  expect(forged.status).toBe(400);
  expect(lines().filter((l) => l.startsWith('webhook.test'))).toHaveLength(1);
  // Its log line travels through a pipe: it may arrive after the answer.
  expect(await until(lines, (l) => l.includes('refused: INVALID_SIGNATURE'))).toContain('refused: INVALID_SIGNATURE');
});
