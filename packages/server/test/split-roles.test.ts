import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject, waitForJob } from './accounts.js';
import { api, bodyOf } from './api.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { startTestPigeon, type TestPigeon } from './helpers.js';
import { mailOf } from './mail.js';
import { verifiedSender } from './sending.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';
import { startTarget, type Target } from './webhook-targets.js';
import { buildWorkflow, createTemplate, executionsOf, track, until } from './workflows.js';

/**
 * An API process and a worker process on one database, as `pigeon start` runs them (the other
 * tests' Pigeon runs both in one process). The worker's polls are set far beyond the waits below,
 * so what the API queues must wake it: a job (Agenda's NOTIFY), a webhook test event, a workflow
 * started by a track (the change feed, then the runner's NOTIFY).
 */
const SLOW_POLLS = {
  JOB_POLL_INTERVAL_MS: '60000',
  WEBHOOK_POLL_MS: '60000',
  WORKFLOW_POLL_MS: '600000',
  CHANGE_FEED_POLL_MS: '20',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
};
/** Far below every poll above. */
const WAKE_MS = 15_000;

let sink: SmtpSink;
let dns: TestDnsServer;
let worker: TestPigeon;
let apiProcess: TestPigeon;
let target: Target;
beforeAll(async () => {
  [sink, dns, target] = await Promise.all([startSmtpSink(), startDnsServer(), startTarget()]);
  const env = { ...SLOW_POLLS, SMTP_URL: sink.url, DNS_SERVERS: dns.address };
  worker = await startTestPigeon({ role: 'worker', env });
  apiProcess = await startTestPigeon({ role: 'api', env, databaseUrl: worker.deps.db.url });
});
afterAll(async () => {
  await apiProcess?.stop();
  await worker?.stop();
  await Promise.all([sink?.close(), dns?.close(), target?.close()]);
});

describe('API and worker in separate processes', () => {
  it('a contact import queued by the API runs in the worker without waiting for its poll', async () => {
    const { auth } = await newProject(apiProcess);
    const form = new FormData();
    form.append('file', new Blob(['email\nsplit-import@example.com\n'], { type: 'text/csv' }), 'contacts.csv');
    const res = await fetch(`${apiProcess.url}/contacts/import`, { method: 'POST', headers: auth, body: form });
    expect(res.status).toBe(202);
    const { jobId } = (await res.json()) as { jobId: string };
    const job = await waitForJob(apiProcess, `/contacts/import/${jobId}`, auth, WAKE_MS);
    expect(job).toMatchObject({ status: 'completed', created: 1 });
  });

  it("a webhook endpoint's test event is delivered without waiting for the claim loop's poll", async () => {
    const { auth } = await newProject(apiProcess);
    const client = api(apiProcess, auth);
    const endpoint = bodyOf(
      await client.webhookEndpoints.create({ body: { url: `${target.origin}/split`, eventTypes: ['email.*'] } }),
      201,
    );
    bodyOf(await client.webhookEndpoints.test({ params: { id: endpoint.id }, body: {} }), 202);
    const [delivery] = await until(
      () => target.received.filter((r) => r.path === '/split'),
      (received) => received.length > 0,
      WAKE_MS,
    );
    expect(JSON.parse(delivery?.body ?? '{}')).toMatchObject({ type: 'webhook.test' });
  });

  it('a track through the API starts a workflow in the worker, whose email reaches the relay', async () => {
    const s = await verifiedSender(apiProcess, dns);
    const templateId = await createTemplate(apiProcess, s.auth, {
      subject: 'Welcome',
      body: '<p>Hello</p>',
      from: s.from,
      type: 'TRANSACTIONAL',
    });
    const flow = await buildWorkflow(apiProcess, s.auth, {
      trigger: 'split.signup',
      steps: [{ key: 'welcome', type: 'SEND_EMAIL', config: { templateId } }],
      transitions: [],
    });
    await track(apiProcess, s.auth, 'split-flow@example.com', 'split.signup');
    const runs = await until(
      () => executionsOf(apiProcess, s.auth, flow.id),
      (all) => all.some((r) => r.status === 'COMPLETED'),
      WAKE_MS,
    );
    expect(runs.map((r) => r.status)).toEqual(['COMPLETED']);
    const [email] = bodyOf(await api(apiProcess, s.auth).sentEmails.list({ query: { templateId } }), 200).data;
    expect(email?.workflowId).toBe(flow.id);
    const message = await mailOf(sink, email?.id ?? '');
    expect(message.raw).toContain('Subject: Welcome');
  });
});
