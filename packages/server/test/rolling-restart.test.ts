import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { queryRows, sql } from '../src/db/query.js';
import { newProject } from './accounts.js';
import { api, bodyOf } from './api.js';
import { killAllCli, startCli } from './cli.js';
import { setDomainsVerified } from './fixtures/domains.js';
import { createTestDatabase, startTestPigeon } from './helpers.js';
import { freePort } from './ports.js';
import { startSmtpSink } from './smtp-sink.js';
import { until } from './until.js';

const dirs: string[] = [];
afterAll(async () => {
  await killAllCli();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const RECIPIENTS = 300;

/**
 * "Upgrading" as docs/deploying.md describes it: two API processes and two workers on one database,
 * each restarted in turn (SIGTERM, then started again) while a campaign sends and clients track
 * through whichever API answers. Nothing accepted is lost, nothing is sent twice.
 */
it('a rolling restart of every API and worker process during a campaign loses and duplicates nothing', async () => {
  // Each message held 100 ms by the relay, one delivery loop per worker: the campaign (~15 s) outlasts
  // the restarts (a process stops in ~0.1 s and starts in 3 to 5 s here).
  const sink = await startSmtpSink({ delayMs: 100 });
  const databaseUrl = await createTestDatabase();
  // Set-up only (a project, its domain, the contacts): this process serves no traffic below.
  const setup = await startTestPigeon({ databaseUrl, role: 'api', env: { SMTP_URL: sink.url } });
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-rolling-'));
  chmodSync(dir, 0o755);
  dirs.push(dir);
  const env = { PIGEON_DATA_DIR: dir, DATABASE_URL: databaseUrl, SMTP_URL: sink.url, DELIVERY_CONCURRENCY: '1' };
  try {
    const { auth, project } = await newProject(setup);
    const client = api(setup, auth);
    bodyOf(await client.domains.create({ body: { domain: 'rolling.example' } }), 201);
    await setDomainsVerified(setup.deps.db.pool, project.id);
    const emails = Array.from({ length: RECIPIENTS }, (_, i) => `r${i}@example.com`);
    for (let i = 0; i < emails.length; i += 25) {
      await Promise.all(emails.slice(i, i + 25).map((email) => client.contacts.create({ body: { email } })));
    }

    const apiOn = async () => {
      const port = String(await freePort());
      const started = startCli(['api'], { ...env, PORT: port, WORKER_PROCESSES: '0' });
      await started.ready;
      return { ...started, url: `http://127.0.0.1:${port}` };
    };
    const workerOn = async () => {
      const started = startCli(['worker'], env);
      await started.ready;
      return started;
    };
    const apis = [await apiOn(), await apiOn()];
    const workers = [await workerOn(), await workerOn()];

    const campaign = bodyOf(
      await client.campaigns.create({
        body: {
          name: 'Rolling',
          subject: 'Rolling',
          body: '<p>Hi</p>',
          from: 'news@rolling.example',
          audienceType: 'ALL',
        },
      }),
      201,
    ).data;
    bodyOf(await client.campaigns.send({ params: { id: campaign.id }, body: {} }), 200);

    // Clients keep tracking meanwhile, each request with its own Idempotency-Key, retried on the
    // other API when one is down: every track is recorded once.
    let tracking = true;
    const tracked: string[] = [];
    const tracker = (async () => {
      for (let n = 0; tracking; n++) {
        const key = `rolling-${n}`;
        for (let attempt = 0; ; attempt++) {
          const target = apis[(n + attempt) % apis.length];
          const res = await fetch(`${target?.url}/v1/track`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${project.publicKey}`,
              'content-type': 'application/json',
              'idempotency-key': key,
            },
            body: JSON.stringify({ email: 'tracker@example.com', event: 'rolling', data: { n } }),
          }).catch(() => undefined);
          if (res?.status === 200 || res?.status === 409) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        tracked.push(key);
      }
    })();

    const restart = async <T extends { child: { kill: (s: NodeJS.Signals) => void }; exited: Promise<number | null> }>(
      list: T[],
      index: number,
      start: () => Promise<T>,
    ) => {
      const old = list[index] as T;
      old.child.kill('SIGTERM');
      expect(await old.exited).toBe(0);
      list[index] = await start();
    };
    const sentSoFar = () => sink.messages.filter((m) => m.messageId?.endsWith('@rolling.example>')).length;
    await until(sentSoFar, (n) => n > 0, 30_000);
    await restart(workers, 0, workerOn);
    await restart(workers, 1, workerOn);
    await restart(apis, 0, apiOn);
    await restart(apis, 1, apiOn);
    const duringRestarts = sentSoFar();
    expect(duringRestarts, 'the restarts overlapped the campaign').toBeLessThan(RECIPIENTS);

    await sink.waitFor(RECIPIENTS, 60_000);
    tracking = false;
    await tracker;
    await new Promise((r) => setTimeout(r, 1000)); // room for a duplicate to show up

    const ours = sink.messages.filter((m) => m.messageId?.endsWith('@rolling.example>'));
    expect(ours).toHaveLength(RECIPIENTS);
    expect(new Set(ours.map((m) => m.messageId)).size).toBe(RECIPIENTS);
    expect(new Set(ours.flatMap((m) => m.to)).size).toBe(RECIPIENTS);
    const detail = await until(
      async () => bodyOf(await client.campaigns.get({ params: { id: campaign.id } }), 200),
      (c) => c.status === 'SENT',
      30_000,
    );
    expect(detail).toMatchObject({ status: 'SENT', sentCount: RECIPIENTS });

    const rows = await queryRows(
      setup.deps.db.pool,
      sql`SELECT count(*)::int AS n, count(DISTINCT data->>'n')::int AS distinct_n FROM events
        WHERE project_id = ${project.id} AND name = 'rolling'`,
    );
    expect(rows[0]).toEqual({ n: tracked.length, distinct_n: tracked.length });
    expect(tracked.length).toBeGreaterThan(10);
    for (const p of [...apis, ...workers]) p.child.kill('SIGTERM');
    await Promise.all([...apis, ...workers].map((p) => p.exited));
  } finally {
    await setup.stop();
    await sink.close();
  }
}, 180_000);
