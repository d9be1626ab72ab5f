import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { queryRows, sql } from '../src/db/query.js';
import { newProject } from './accounts.js';
import { api as client } from './api.js';
import { setDomainsVerified } from './fixtures/domains.js';
import { wakeExecution } from './fixtures/workflows.js';
import { createTestDatabase, startTestPigeon, type TestPigeon } from './helpers.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';
import { startTarget, type Target } from './webhook-targets.js';
import { killHard, stopGracefully, workerProcesses } from './worker-processes.js';
import { buildWorkflow, createTemplate, executionDetail, executionsOf, track, until } from './workflows.js';

/**
 * A worker killed between a step's side effect and its record: the step is neither lost nor
 * repeated. The API runs in this process; workers are real `pigeon worker` processes.
 */
let api: TestPigeon;
let sink: SmtpSink;
let target: Target;
let databaseUrl: string;
let hold = false;
const pending: Array<() => void> = [];
let workers: ReturnType<typeof workerProcesses>;
beforeAll(async () => {
  sink = await startSmtpSink();
  // While `hold` is set, requests wait in `pending` for the test to answer them.
  target = await startTarget((_req, res) => {
    const answer = () => res.end('ok');
    if (hold) pending.push(answer);
    else answer();
  });
  databaseUrl = await createTestDatabase();
  api = await startTestPigeon({ databaseUrl, role: 'api', env: { SMTP_URL: sink.url } });
  workers = workerProcesses({
    DATABASE_URL: databaseUrl,
    SMTP_URL: sink.url,
    CHANGE_FEED_POLL_MS: '20',
    WORKFLOW_POLL_MS: '50',
    WORKFLOW_CONCURRENCY: '1',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    LINK_SIGNING_SECRET: api.deps.config.secrets.linkSigning,
    SESSION_SECRET: api.deps.config.secrets.session,
  });
});
afterAll(async () => {
  await workers?.stopAll();
  await api?.stop();
  await Promise.all([sink?.close(), target?.close()]);
});
const worker = () => workers.start();

async function verified(auth: Record<string, string>, projectId: string) {
  await client(api, auth).domains.create({ body: { domain: 'crash-wf.example' } });
  await setDomainsVerified(api.deps.db.pool, projectId);
}

it('SEND_EMAIL: a worker killed after queueing the email but before recording the step sends it once', async () => {
  const { auth, project } = await newProject(api);
  await verified(auth, project.id);
  const template = await createTemplate(api, auth, {
    subject: 'Once',
    body: '<p>once</p>',
    from: 'hi@crash-wf.example',
  });
  const wf = await buildWorkflow(api, auth, {
    trigger: 'crash.mail',
    steps: [{ key: 'mail', type: 'SEND_EMAIL', config: { templateId: template } }],
    transitions: [],
  });
  // Step records wait behind this lock: the worker's transaction holds the queued email and blocks
  // on recording the step, and is killed right there.
  const blocker = new pg.Client({ connectionString: databaseUrl });
  await blocker.connect();
  await blocker.query('BEGIN');
  await blocker.query('LOCK TABLE workflow_step_runs IN SHARE MODE');
  const first = worker();
  await first.ready;
  const email = `once-${Date.now()}@example.com`;
  await track(api, auth, email, 'crash.mail');
  const blocked = await until(
    async () =>
      (
        await api.deps.db.pool.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%workflow_step_runs%'`,
        )
      ).rows[0].n as number,
    (n) => n > 0,
  );
  expect(blocked).toBe(1);
  await killHard(first);
  await blocker.query('COMMIT');
  await blocker.end();
  // The killed transaction took its email with it.
  const none = await queryRows(
    api.deps.db.pool,
    sql`SELECT count(*)::int AS n FROM emails WHERE workflow_execution_id IS NOT NULL AND project_id = ${project.id}`,
  );
  expect(none[0]?.n).toBe(0);

  const second = worker();
  await second.ready;
  await until(
    () => executionsOf(api, auth, wf.id),
    (l) => l[0]?.status === 'COMPLETED',
    30_000,
  );
  await until(
    () => sink.messages.filter((m) => m.to.includes(email)),
    (m) => m.length > 0,
  );
  await new Promise((r) => setTimeout(r, 500)); // room for a duplicate to show up
  expect(sink.messages.filter((m) => m.to.includes(email))).toHaveLength(1);
  const rows = await queryRows(
    api.deps.db.pool,
    sql`SELECT count(*)::int AS n FROM emails WHERE project_id = ${project.id} AND workflow_execution_id IS NOT NULL`,
  );
  expect(rows[0]?.n).toBe(1);
  expect(await stopGracefully(second)).toBe(0);
}, 90_000);

it('WEBHOOK: a worker killed while the call is in flight retries it with the same webhook-id, and goes on once', async () => {
  const { auth } = await newProject(api);
  const wf = await buildWorkflow(api, auth, {
    trigger: 'crash.hook',
    steps: [
      { key: 'hook', type: 'WEBHOOK', config: { url: `${target.origin}/crash` } },
      { key: 'after', type: 'UPDATE_CONTACT', config: { updates: { after: true } } },
    ],
    transitions: [['hook', 'after']],
  });
  hold = true;
  const first = worker();
  await first.ready;
  await track(api, auth, `hook-${Date.now()}@example.com`, 'crash.hook');
  await until(
    () => target.received.filter((r) => r.path === '/crash').length,
    (n) => n === 1,
  );
  await killHard(first); // the receiver got the call; the worker never saw the answer
  hold = false;
  for (const answer of pending.splice(0)) answer();
  const [leased] = await executionsOf(api, auth, wf.id);
  expect(leased?.status).toBe('RUNNING');
  // The lease of the dead worker runs out.
  await wakeExecution(api.deps.db.pool, leased?.id as string);

  const second = worker();
  await second.ready;
  await until(
    () => executionsOf(api, auth, wf.id),
    (l) => l[0]?.status === 'COMPLETED',
    30_000,
  );
  const calls = target.received.filter((r) => r.path === '/crash');
  expect(calls).toHaveLength(2);
  expect(calls[1]?.headers['webhook-id']).toBe(calls[0]?.headers['webhook-id']);
  const detail = await executionDetail(api, auth, wf.id, leased?.id as string);
  expect(detail.steps.map((r) => [r.stepType, r.status, r.attempts])).toEqual([
    ['WEBHOOK', 'COMPLETED', 2],
    ['UPDATE_CONTACT', 'COMPLETED', 1],
  ]);
  expect(await stopGracefully(second)).toBe(0);
}, 90_000);
