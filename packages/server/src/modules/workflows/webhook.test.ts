import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { startDnsServer, type TestDnsServer } from '../../../test/dns-server.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { startTarget, type Target } from '../../../test/webhook-targets.js';
import { buildWorkflow, executionDetail, executionsOf, track, until } from '../../../test/workflows.js';
import { runStatement, sql } from '../../db/query.js';

let open: TestPigeon; // WEBHOOK_ALLOW_PRIVATE_NETWORKS=true: may call the loopback test target
let guarded: TestPigeon; // the default: private targets refused
let dns: TestDnsServer;
let target: Target;
let failFirst = 0;
beforeAll(async () => {
  dns = await startDnsServer();
  target = await startTarget((req, res) => {
    if (failFirst > 0) {
      failFirst--;
      res.statusCode = 503;
      return res.end('busy');
    }
    res.statusCode = req.path.includes('missing') ? 404 : 200;
    res.end(JSON.stringify({ ok: true }));
  });
  const env = { DNS_SERVERS: dns.address, CHANGE_FEED_POLL_MS: '20', WORKFLOW_POLL_MS: '50' };
  [open, guarded] = await Promise.all([
    startTestPigeon({ env: { ...env, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } }),
    startTestPigeon({ env }),
  ]);
});
afterAll(async () => {
  await Promise.all([open?.stop(), guarded?.stop()]);
  await Promise.all([dns?.close(), target?.close()]);
});

type Auth = Record<string, string>;
async function webhookFlow(pigeon: TestPigeon, auth: Auth, trigger: string, config: Record<string, unknown>) {
  return buildWorkflow(pigeon, auth, {
    trigger,
    steps: [
      { key: 'hook', type: 'WEBHOOK', config },
      { key: 'after', type: 'UPDATE_CONTACT', config: { updates: { hooked: true } } },
    ],
    transitions: [['hook', 'after']],
  });
}
const hits = (path: string) => target.received.filter((r) => r.path.startsWith(path));

describe('WEBHOOK steps', () => {
  it('signs the Standard Webhooks way, renders variables, and retries a 503 with the same webhook-id', async () => {
    const { auth, project, owner } = await newProject(open);
    const rotated = await api(open, { cookie: owner.cookie }).users.rotateWebhookSecret({ params: { id: project.id } });
    const secret = bodyOf(rotated, 200).data.secret;
    const wf = await webhookFlow(open, auth, 'hook.me', {
      url: `${target.origin}/signed/{{event.orderId}}`,
      headers: { 'X-Plan': '{{data.plan}}' },
    });
    failFirst = 1;
    const email = `hook-${Date.now()}@example.com`;
    const tracked = Date.now();
    await track(open, auth, email, 'hook.me', { orderId: 'o-42', plan: 'gold' });

    // First attempt: 503, recorded, due again after the backoff (30 s ± 10%). The attempt is
    // committed (and the execution leased, due 40 s on) BEFORE the call goes out, and its outcome
    // recorded after the answer: wait for the recorded outcome, not for the call or the lease.
    const [execution] = await until(
      () => executionsOf(open, auth, wf.id),
      (l) => l.length === 1,
    );
    let detail = await until(
      () => executionDetail(open, auth, wf.id, execution?.id as string),
      (d) => d.steps[0]?.error != null,
    );
    expect(detail.steps[0]).toMatchObject({ stepType: 'WEBHOOK', status: 'RUNNING', attempts: 1 });
    expect(detail.steps[0]?.error).toContain('503');
    expect(hits('/signed')).toHaveLength(1);
    const [retrying] = await executionsOf(open, auth, wf.id);
    // Due when the backoff ends (27 to 33 s after the outcome, recorded between `tracked` and now),
    // not when the lease would.
    const due = Date.parse(String(retrying?.nextRunAt));
    expect(due).toBeGreaterThanOrEqual(tracked + 27_000);
    expect(due).toBeLessThanOrEqual(Date.now() + 33_000);
    // The backoff's time passes.
    await runStatement(
      open.deps.db.pool,
      sql`UPDATE workflow_executions SET wake_at = now() WHERE id = ${execution?.id}`,
    );
    await until(
      () => executionsOf(open, auth, wf.id),
      (l) => l[0]?.status === 'COMPLETED',
    );
    const [a, b] = hits('/signed');
    expect(a?.path).toBe('/signed/o-42');
    expect(a?.headers['x-plan']).toBe('gold');
    expect(a?.headers['webhook-id']).toMatch(/^msg_/);
    expect(b?.headers['webhook-id']).toBe(a?.headers['webhook-id']);
    const verified = new Webhook(secret).verify(b?.body ?? '', b?.headers as Record<string, string>) as Record<
      string,
      Record<string, unknown>
    >;
    expect(verified.event).toEqual({ name: 'hook.me', data: { orderId: 'o-42', plan: 'gold' } });
    expect(verified.contact).toMatchObject({ email });
    expect(verified.workflow).toEqual({ id: wf.id, name: 'wf hook.me' });
    detail = await executionDetail(open, auth, wf.id, execution?.id as string);
    expect(detail.steps.map((r) => [r.stepType, r.status, r.attempts])).toEqual([
      ['WEBHOOK', 'COMPLETED', 2],
      ['UPDATE_CONTACT', 'COMPLETED', 1],
    ]);
    expect(detail.steps[0]?.output).toMatchObject({ statusCode: 200, webhookId: a?.headers['webhook-id'] });
  });

  it('a 4xx answer fails the execution at once', async () => {
    const { auth } = await newProject(open);
    const wf = await webhookFlow(open, auth, 'hook.404', {
      url: `${target.origin}/missing`,
      method: 'PUT',
      body: { a: '{{email}}' },
    });
    const email = `hook404-${Date.now()}@example.com`;
    await track(open, auth, email, 'hook.404');
    const [failed] = await until(
      () => executionsOf(open, auth, wf.id),
      (l) => l[0]?.status === 'FAILED',
    );
    expect(failed?.exitReason).toContain('HTTP 404');
    expect(hits('/missing').map((r) => [r.method, JSON.parse(r.body)])).toEqual([['PUT', { a: email }]]);
  });

  it('refuses private targets: a loopback address, and a name that resolves to one', async () => {
    const { auth } = await newProject(guarded);
    dns.setAddresses('internal.hooks.example', '127.0.0.1');
    const before = target.received.length;
    for (const [trigger, url] of [
      ['hook.loopback', `${target.origin}/private`],
      ['hook.name', `http://internal.hooks.example:${target.port}/private`],
      ['hook.metadata', 'http://169.254.169.254/latest/meta-data'],
    ] as const) {
      const wf = await webhookFlow(guarded, auth, trigger, { url });
      await track(guarded, auth, `${trigger}-${Date.now()}@example.com`, trigger);
      const [failed] = await until(
        () => executionsOf(guarded, auth, wf.id),
        (l) => l[0]?.status === 'FAILED',
      );
      expect(failed?.status, trigger).toBe('FAILED');
      const detail = await executionDetail(guarded, auth, wf.id, failed?.id as string);
      expect(detail.steps[0]?.error, trigger).toMatch(/loopback|private|link-local|not allowed|forbidden/i);
    }
    expect(target.received.length).toBe(before);
  });
});
