import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newProject } from './accounts.js';
import { api, bodyOf } from './api.js';
import { forgetMigration } from './fixtures/db.js';
import { adminQuery } from './global-setup.js';
import { createTestDatabase, startTestPigeon, type TestPigeon } from './helpers.js';

const ready = (pigeon: TestPigeon) => api(pigeon).system.ready();
type Ready = Awaited<ReturnType<typeof ready>>;

/** Polls `/health/ready` until `check` holds (or the deadline passes) and returns the last answer. */
async function readyUntil(pigeon: TestPigeon, check: (res: Ready) => boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await ready(pigeon);
    if (check(res) || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 200));
  }
}
const isReady = (res: Ready) => res.status === 200;
const failsOn = (check: string) => (res: Ready) =>
  res.status === 503 && res.body.reasons.some((r) => r.check === check);

// Heartbeats every second (dead after three missed), a feed lag limit of 2 s.
const env = { WORKER_HEARTBEAT_SECONDS: '1', READY_MAX_FEED_LAG_SECONDS: '2', CHANGE_FEED_POLL_MS: '50' };

describe('GET /health/ready with workers in this process', () => {
  let pigeon: TestPigeon;
  beforeAll(async () => {
    pigeon = await startTestPigeon({ env });
  });
  afterAll(() => pigeon?.stop());

  it('answers 200 with no reasons when everything works, without authentication', async () => {
    const res = await readyUntil(pigeon, isReady);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', reasons: [], version: expect.any(String) });
  });

  it('503 while a migration this code knows is not applied', async () => {
    const { pool } = pigeon.deps.db;
    const restore = await forgetMigration(pool, 'Migration20261203000000');
    try {
      const res = await ready(pigeon);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({
        status: 'not_ready',
        reasons: [{ check: 'migrations', message: 'migrations pending: Migration20261203000000_worker_heartbeats' }],
      });
    } finally {
      await restore();
    }
    expect((await ready(pigeon)).status).toBe(200);
  });

  it('503 while a change-feed consumer is stuck behind the lag limit, 200 once it catches up', async () => {
    // Another session holds every part of one consumer, as a hung transaction would: it cannot read.
    const holder = new pg.Client({ connectionString: pigeon.deps.db.url });
    await holder.connect();
    try {
      await holder.query(
        "SELECT pg_advisory_lock(hashtext('change-feed:workflows.triggers'), part) FROM generate_series(0, 7) AS part",
      );
      const { project } = await newProject(pigeon);
      const tracked = await api(pigeon, { authorization: `Bearer ${project.publicKey}` }).events.track({
        body: { email: 'lag@ready.example', event: 'lagging' },
      });
      expect(tracked.status).toBe(200);
      const stuck = await readyUntil(pigeon, failsOn('change_feed'));
      expect(stuck.status).toBe(503);
      expect(bodyOf(stuck, 503).reasons).toEqual([
        {
          check: 'change_feed',
          message: expect.stringMatching(/^change feed consumer workflows\.triggers lags \d+ s \(limit 2 s\)$/),
        },
      ]);
    } finally {
      await holder.end();
    }
    expect((await readyUntil(pigeon, isReady)).status).toBe(200);
  });
});

describe('GET /health/ready against the workers and the database', () => {
  let databaseUrl: string;
  let apiOnly: TestPigeon;
  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
    apiOnly = await startTestPigeon({ databaseUrl, role: 'api', env });
  });
  afterAll(() => apiOnly?.stop());

  it('503 while no worker process is alive; 200 while one runs; 503 again once it stopped', async () => {
    const alone = await ready(apiOnly);
    expect(alone.status).toBe(503);
    expect(bodyOf(alone, 503).reasons).toEqual([
      { check: 'workers', message: 'no worker process alive (none wrote its heartbeat in the last 3 s)' },
    ]);
    const worker = await startTestPigeon({ databaseUrl, role: 'worker', env });
    try {
      expect((await readyUntil(apiOnly, isReady)).status).toBe(200);
    } finally {
      await worker.stop();
    }
    expect(bodyOf(await ready(apiOnly), 503).reasons).toMatchObject([{ check: 'workers' }]);
  }, 90_000);

  it('503 while the database refuses connections; /health says degraded; back once it accepts them', async () => {
    const admin = inject('adminDatabaseUrl');
    const name = new URL(databaseUrl).pathname.slice(1);
    await adminQuery(admin, `ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    try {
      await adminQuery(admin, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
      const down = await readyUntil(apiOnly, failsOn('database'));
      expect(down.status).toBe(503);
      expect(bodyOf(down, 503).reasons).toEqual([
        { check: 'database', message: expect.stringMatching(/^database unreachable: /) },
      ]);
      expect((await api(apiOnly).system.health()).body).toMatchObject({ status: 'degraded', database: 'down' });
    } finally {
      await adminQuery(admin, `ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    }
    const back = await readyUntil(apiOnly, failsOn('workers'));
    expect(bodyOf(back, 503).reasons).toMatchObject([{ check: 'workers' }]);
  }, 60_000);
});
