import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { newProject } from '../../test/accounts.js';
import { api } from '../../test/api.js';
import { startTestPigeon, type TestPigeon } from '../../test/helpers.js';
import { startStreamingPair } from '../../test/streaming-replica.js';
import { until } from '../../test/until.js';
import { createLogger } from '../logger.js';
import { eventStats } from '../modules/events/service.js';
import { openReplica } from './replica.js';

// A real primary and a hot standby streaming from it (embedded PostgreSQL's binaries); Pigeon reads
// the rollup-backed stats from the standby. Pausing the standby's replay makes "which one answered"
// visible: the standby then keeps the counts it had.
const pair = await startStreamingPair('pigeon');
const replicaEnv = (maxLagSeconds: number) => ({
  DATABASE_REPLICA_URL: pair.replicaUrl('pigeon'),
  DATABASE_REPLICA_MAX_LAG_SECONDS: String(maxLagSeconds),
  CHANGE_FEED_POLL_MS: '40',
});
const pigeon = await startTestPigeon({ databaseUrl: pair.primaryUrl('pigeon'), env: replicaEnv(3600) });
const { auth, project } = await newProject(pigeon);
const projectId: string = project.id;
let extra: TestPigeon | undefined;

// Each test starts from a standby that replays (a failed one may have left it paused).
afterEach(async () => {
  await pair.onReplica('SELECT pg_wal_replay_resume()').catch(() => undefined);
});

afterAll(async () => {
  await extra?.stop();
  await pigeon.stop();
  await pair.stop();
});

const track = async (n: number) => {
  for (let i = 0; i < n; i++) {
    const res = await api(pigeon, auth).events.track({ body: { event: 'signup', email: `u${i}@example.com` } });
    expect(res.status).toBe(200);
  }
};
const statsTotal = async (on: TestPigeon) => {
  const res = await api(on, auth).events.stats({ query: {} });
  expect(res.status).toBe(200);
  return (res.body as { total: number }).total;
};
/** What the primary's rollup holds now (read there directly). */
const primaryTotal = async () => (await eventStats(pigeon.deps.db.pool, projectId, {}, pigeon.deps.clock.now())).total;
const replayPaused = async (paused: boolean) => {
  await pair.onReplica(paused ? 'SELECT pg_wal_replay_pause()' : 'SELECT pg_wal_replay_resume()');
  const state = await until(
    () => pair.onReplica('SELECT pg_get_wal_replay_pause_state() AS s'),
    (r) => r[0]?.s === (paused ? 'paused' : 'not paused'),
  );
  expect(state[0]?.s).toBe(paused ? 'paused' : 'not paused');
};
const inUse = async (on: TestPigeon, expected: boolean) => {
  const state = await until(
    () => on.deps.db.replica?.state(),
    (s) => s?.inUse === expected,
  );
  expect(state?.inUse).toBe(expected);
};

describe('a read replica (DATABASE_REPLICA_URL)', () => {
  it('answers the stats while it keeps up: paused, it keeps the counts it had', async () => {
    await track(2);
    expect(await until(primaryTotal, (n) => n === 2)).toBe(2);
    await pair.caughtUp();
    await inUse(pigeon, true);
    expect(await statsTotal(pigeon)).toBe(2);

    await replayPaused(true);
    await track(3);
    expect(await until(primaryTotal, (n) => n === 5)).toBe(5);
    // Within the bound (an hour): the standby answers, with what it had replayed.
    expect(await statsTotal(pigeon)).toBe(2);
    const activity = await api(pigeon, auth).activity.stats({ query: {} });
    expect((activity.body as { total: number }).total).toBe(2);

    await replayPaused(false);
    expect(
      await until(
        () => statsTotal(pigeon),
        (n) => n === 5,
      ),
    ).toBe(5);
  });

  it('sends the reads to the primary while the replica lags beyond the bound', async () => {
    extra = await startTestPigeon({
      databaseUrl: pair.primaryUrl('pigeon'),
      role: 'api',
      env: { ...replicaEnv(1), METRICS_PORT: '0' },
    });
    await pair.caughtUp();
    await inUse(extra, true);

    await replayPaused(true);
    const before = await primaryTotal();
    await track(1);
    expect(await until(primaryTotal, (n) => n === before + 1)).toBe(before + 1);
    await inUse(extra, false);
    expect(extra.deps.db.replica?.state().lagSeconds).toBeGreaterThan(1);
    expect(await statsTotal(extra)).toBe(before + 1);
    const metrics = await (await fetch(`http://127.0.0.1:${extra.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^pigeon_db_replica_in_use 0$/m);
    expect(Number(/^pigeon_db_replica_lag_seconds (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThan(1);

    await replayPaused(false);
    await inUse(extra, true);
  });

  it('answers from the primary when the replica is down, and stays ready', async () => {
    await pair.caughtUp();
    await inUse(pigeon, true);
    // Sampled once only: the replica still counts as in use when it goes down.
    const replica = openReplica(pair.replicaUrl('pigeon'), {
      primary: pigeon.deps.db.pool,
      poolSize: 1,
      maxLagSeconds: 3600,
      logger: createLogger('silent'),
      sampleMs: 3_600_000,
    });
    try {
      await replica.firstSample;
      expect(replica.state().inUse).toBe(true);
      await replayPaused(true);
      const expected = (await primaryTotal()) + 1;
      await track(1);
      expect(await until(primaryTotal, (n) => n === expected)).toBe(expected);
      expect((await eventStats(replica.reads, projectId, {}, pigeon.deps.clock.now())).total).toBe(expected - 1);

      await pair.stopReplica();
      expect(replica.state().inUse).toBe(true);
      // The read fails on the stopped replica and runs again on the primary.
      expect((await eventStats(replica.reads, projectId, {}, pigeon.deps.clock.now())).total).toBe(expected);
      await inUse(pigeon, false);
      expect(pigeon.deps.db.replica?.state().lagSeconds).toBeNull();
      expect(await statsTotal(pigeon)).toBe(expected);
      expect((await api(pigeon).system.ready()).status).toBe(200);
    } finally {
      await replica.close();
    }
  });
});
