import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordDeliveryFeedback } from '../packages/server/src/modules/deliverability/feedback.js';
import { newProject } from '../packages/server/test/accounts.js';
import { startDnsServer, type TestDnsServer } from '../packages/server/test/dns-server.js';
import { startTestPigeon, type TestPigeon } from '../packages/server/test/helpers.js';

let pigeon: TestPigeon;
let dns: TestDnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
  pigeon = await startTestPigeon({ env: { DNS_SERVERS: dns.address } });
});
afterAll(async () => {
  await pigeon?.stop();
  await dns?.close();
});

it('runs the sign-up check against a real server', async () => {
  const { project, auth } = await newProject(pigeon);
  dns.setNxDomain('gmial.com');
  dns.setNxDomain('gone.example');
  dns.setMx('mailinator.com', '10 mx.mailinator.com');
  dns.setMx('example.com', '10 mx.example.com');
  await pigeon.request('POST', '/domains', { headers: auth, body: { domain: 'shop.example' } });
  const sent = await pigeon.request('POST', '/v1/send', {
    headers: auth,
    body: { to: 'old@example.com', from: 'hi@shop.example', subject: 's', body: 'b' },
  });
  const feedback = { kind: 'complaint', feedbackType: 'abuse', source: 'arf' } as const;
  await recordDeliveryFeedback(pigeon.deps, sent.body.data.emails[0].email, feedback);

  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      fileURLToPath(new URL('./verify-signup.mjs', import.meta.url)),
      'ada@gmial.com',
      'bob@gone.example',
      'temp@mailinator.com',
      'grace@example.com',
    ],
    { env: { PATH: process.env.PATH, PIGEON_URL: pigeon.url, PIGEON_SECRET_KEY: project.secretKey } },
  );
  expect(stdout.trim().split('\n')).toEqual([
    'ada@gmial.com: did you mean ada@gmail.com?',
    'bob@gone.example: refused (The domain gone.example does not exist)',
    'temp@mailinator.com: a disposable address, ask for another',
    'grace@example.com: ok',
    'suppressed: old@example.com (complaint: abuse)',
    '1 suppressed address',
  ]);
});
