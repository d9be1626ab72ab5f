import { afterAll, expect, it } from 'vitest';
import { queryRows, sql } from '../src/db/query.js';
import { newProject } from './accounts.js';
import { bodyOf, api as client } from './api.js';
import { setDomainsVerified } from './fixtures/domains.js';
import { createTestDatabase, startTestPigeon } from './helpers.js';
import { startSmtpSink } from './smtp-sink.js';
import { until } from './until.js';
import { killHard, stopGracefully, workerProcesses } from './worker-processes.js';

let workers: ReturnType<typeof workerProcesses> | undefined;
afterAll(() => workers?.stopAll());

it('a worker killed mid-batch neither loses nor duplicates a message', async () => {
  // Each message is held 500 ms before the 250: the kill below lands well inside the next one's hold.
  const sink = await startSmtpSink({ delayMs: 500 });
  // One delivery loop, so exactly one message is in flight when the worker dies.
  const databaseUrl = await createTestDatabase();
  const api = await startTestPigeon({ databaseUrl, role: 'api', env: { SMTP_URL: sink.url } });
  try {
    const { auth, project } = await newProject(api);
    await client(api, auth).domains.create({ body: { domain: 'crash.example' } });
    await setDomainsVerified(api.deps.db.pool, project.id);
    workers = workerProcesses({
      DATABASE_URL: databaseUrl,
      SMTP_URL: sink.url,
      DELIVERY_CONCURRENCY: '1',
      DELIVERY_CLAIM_TIMEOUT_SECONDS: '2',
    });

    const first = workers.start();
    await first.ready;
    const to = Array.from({ length: 20 }, (_, i) => `r${i}@example.com`);
    const sent = await client(api, auth).emails.send({
      body: { to, from: 'ops@crash.example', subject: 'crash test', body: '<p>x</p>' },
    });
    expect(bodyOf(sent, 200).data.emails).toHaveLength(20);

    // Kill while a message waits for its final SMTP reply, once every message the sink accepted is
    // recorded SENT. Killing between the server's 250 and the worker recording SENT is a window no
    // protocol closes (there the stable Message-ID lets receivers dedupe); a fixed 50 ms pause after
    // the 4th acceptance, with a 100 ms hold, landed in it on a loaded machine. The sink runs in this
    // process: between its count and the kill, no acceptance can happen.
    const ours = () => sink.messages.filter((m) => m.messageId?.endsWith('@crash.example>'));
    const before = sink.messages.length; // the signup's verification mail went through this sink too
    await sink.waitFor(before + 4);
    const settled = await until(
      async () => {
        const accepted = ours().length;
        const [row] = await queryRows<{ n: number }>(
          api.deps.db.pool,
          sql`SELECT count(*)::int AS n FROM emails WHERE project_id = ${project.id}::uuid AND status = 'SENT'`,
        );
        return row?.n === accepted && ours().length === accepted;
      },
      (done) => done,
      30_000,
    );
    await killHard(first);
    expect(settled).toBe(true);
    const { rows: inFlight } = await api.deps.db.pool.query(
      "SELECT count(*)::int AS n FROM emails WHERE status = 'SENDING'",
    );
    expect(inFlight[0].n).toBeGreaterThan(0); // the kill really happened mid-batch

    const second = workers.start();
    await second.ready;
    await sink.waitFor(before + 20, 30_000);
    await new Promise((r) => setTimeout(r, 500)); // room for a duplicate to show up
    const ids = ours().map((m) => m.messageId);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
    // The sink counts a message a moment before the worker marks its row: wait for the marks.
    const statuses = await until(
      async () => (await api.deps.db.pool.query('SELECT status, count(*)::int AS n FROM emails GROUP BY status')).rows,
      (rows) => rows.length === 1 && rows[0].status === 'SENT' && rows[0].n === 20,
    );
    expect(statuses).toEqual([{ status: 'SENT', n: 20 }]);
    expect(await stopGracefully(second)).toBe(0);
  } finally {
    await api.stop();
    await sink.close();
  }
}, 90_000);
