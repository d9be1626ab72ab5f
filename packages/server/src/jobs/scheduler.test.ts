import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startTestPigeon, type TestPigeon } from '../../test/helpers.js';
import { queryRows, sql } from '../db/query.js';
import { defineJob, JobRegistry, noPayload } from './registry.js';
import { createScheduler } from './scheduler.js';

const runs: Array<{ value: number; queried: boolean; attempt: number }> = [];
let flakyFailuresLeft = 2;

const recordJob = defineJob({
  name: 'test.record',
  payload: z.object({ value: z.number().int() }),
  handler: async (payload, ctx) => {
    const { rows } = await ctx.deps.db.pool.query<{ n: number }>('SELECT 1 AS n');
    await ctx.progress(100);
    runs.push({ value: payload.value, queried: rows[0]?.n === 1, attempt: 0 });
  },
});

const flakyJob = defineJob({
  name: 'test.flaky',
  payload: z.object({ value: z.number().int() }),
  maxRetries: 3,
  handler: async (payload) => {
    if (flakyFailuresLeft-- > 0) throw new Error('temporary failure');
    runs.push({ value: payload.value, queried: true, attempt: 2 - flakyFailuresLeft });
  },
});

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon({ extraJobs: [recordJob, flakyJob] });
});
afterAll(() => pigeon?.stop());

/** A scheduler of its own on the test database (as another process's), polling once a minute. */
const schedulerOf = (registry: JobRegistry) =>
  createScheduler({
    pool: pigeon.deps.db.pool,
    registry,
    logger: pigeon.deps.logger,
    concurrency: 1,
    pollIntervalMs: 60_000,
    deps: () => pigeon.deps,
  });

async function waitFor(predicate: () => boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('job scheduler', () => {
  it('runs an enqueued job in the worker, which can query the database', async () => {
    const id = await pigeon.deps.scheduler.enqueue(recordJob, { value: 7 });
    expect(id).toMatch(/.+/);
    await waitFor(() => runs.some((r) => r.value === 7));
    expect(runs.find((r) => r.value === 7)?.queried).toBe(true);
  });

  it('refuses a payload that does not match the job schema, storing nothing', async () => {
    await expect(
      pigeon.deps.scheduler.enqueue(recordJob, { value: 'seven' } as unknown as { value: number }),
    ).rejects.toThrow(/Expected number/);
    const stored = await pigeon.deps.db.pool.query(
      "SELECT count(*)::int AS n FROM agenda_jobs WHERE data->>'value' = 'seven'",
    );
    expect(stored.rows[0].n).toBe(0);
  });

  it('retries a failing job with backoff until it succeeds', async () => {
    await pigeon.deps.scheduler.enqueue(flakyJob, { value: 42 });
    await waitFor(() => runs.some((r) => r.value === 42), 20_000);
    expect(flakyFailuresLeft).toBeLessThan(0);
  });

  it('runs a job scheduled for later only when it is due', async () => {
    const runAt = new Date(Date.now() + 1500);
    await pigeon.deps.scheduler.enqueue(recordJob, { value: 99 }, { runAt });
    await new Promise((r) => setTimeout(r, 500));
    expect(runs.some((r) => r.value === 99)).toBe(false);
    await waitFor(() => runs.some((r) => r.value === 99));
    expect(Date.now()).toBeGreaterThanOrEqual(runAt.getTime());
  });

  it('wakes a worker in another process at once when an API process queues a job (no poll)', async () => {
    // Registered only in the schedulers below: the test's Pigeon (polling every 200 ms) never takes it.
    const notified = defineJob({
      name: 'test.notified',
      payload: z.object({ value: z.number().int() }),
      handler: async (payload) => {
        runs.push({ value: payload.value, queried: false, attempt: 0 });
      },
    });
    // Both poll once a minute: only the API's NOTIFY can start the job within the wait below.
    const worker = await schedulerOf(new JobRegistry().register(notified));
    const api = await schedulerOf(new JobRegistry().register(notified));
    await worker.startWorker();
    try {
      await api.enqueue(notified, { value: 512 });
      await waitFor(() => runs.some((r) => r.value === 512), 15_000);
    } finally {
      await api.stop(1_000);
      await worker.stop(1_000);
    }
  });

  it('removes the stored schedule of a retired periodic job when a worker starts', async () => {
    const hourly = defineJob({ name: 'test.hourly', payload: noPayload, every: '1 hour', handler: async () => {} });
    const stored = async () =>
      (
        await queryRows<{ n: number }>(
          pigeon.deps.db.pool,
          sql`SELECT count(*)::int AS n FROM agenda_jobs WHERE name = ${hourly.name}`,
        )
      )[0]?.n;
    const before = await schedulerOf(new JobRegistry().register(hourly));
    await before.startWorker();
    await before.stop(1_000);
    expect(await stored()).toBe(1);

    expect(() => new JobRegistry().register(hourly).retire(hourly.name)).toThrow(/registered and retired/);
    expect(() => new JobRegistry().retire(hourly.name).register(hourly)).toThrow(/registered and retired/);
    const after = await schedulerOf(new JobRegistry().retire(hourly.name));
    await after.startWorker();
    await after.stop(1_000);
    expect(await stored()).toBe(0);
  });
});
