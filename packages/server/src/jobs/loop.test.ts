import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../test/helpers.js';
import { until } from '../../test/until.js';
import { createLogger } from '../logger.js';
import { loopWakeups } from '../metrics/registry.js';
import { type ListenHub, startListenHub } from './listen-hub.js';
import { type LoopSpec, type RunningLoop, startLoop } from './loop.js';

const HOUR = 3_600_000;
const logger = createLogger('silent');
let url: string;
let db: pg.Pool;
let hub: ListenHub;
const loops: RunningLoop[] = [];

beforeAll(async () => {
  url = await createTestDatabase();
  db = new pg.Pool({ connectionString: url, max: 2 });
  hub = await startListenHub(url, logger, 50);
});
afterAll(async () => {
  await Promise.all(loops.map((l) => l.stop(1000)));
  await hub?.stop();
  await db?.end();
});

/** A loop over an in-memory queue of numbers: `claim` takes the whole queue, `handle` records it. */
async function queueLoop(name: string, spec: Partial<LoopSpec<number[]>> = {}) {
  const queue: number[] = [];
  const handled: number[] = [];
  let claims = 0;
  const loop = await startLoop<number[]>(hub, logger, {
    name,
    channels: [name],
    idleMs: HOUR,
    claim: async () => {
      claims++;
      return queue.length ? queue.splice(0) : undefined;
    },
    handle: async (work) => void handled.push(...work),
    ...spec,
  });
  loops.push(loop);
  return { loop, queue, handled, claims: () => claims };
}

const wakeups = async (loop: string, cause: string) =>
  (await loopWakeups.get()).values.find((v) => v.labels.loop === loop && v.labels.cause === cause)?.value ?? 0;

describe('the loop primitive', () => {
  it('wakes on a NOTIFY of its channel although its idle wait is an hour', async () => {
    const { queue, handled, claims } = await queueLoop('loop_test_notify');
    await until(claims, (n) => n >= 1);
    queue.push(1, 2);
    await db.query(`NOTIFY loop_test_notify`);
    await until(
      () => handled,
      (h) => h.length === 2,
      5000,
    );
    expect(handled).toEqual([1, 2]);
    expect(await wakeups('loop_test_notify', 'notify')).toBe(1);
    expect(await wakeups('loop_test_notify', 'timer')).toBe(0);
  });

  it('does not lose a wake that comes while it is claiming', async () => {
    let release: () => void = () => {};
    let calls = 0;
    const queue: number[] = [];
    const handled: number[] = [];
    const loop = await startLoop<number[]>(hub, logger, {
      name: 'loop_test_busy',
      idleMs: HOUR,
      claim: async () => {
        calls++;
        const work = queue.length ? queue.splice(0) : undefined;
        // The first claim finds nothing, but work arrives (and its wake) before it answers.
        if (calls === 1) await new Promise<void>((r) => (release = r));
        return work;
      },
      handle: async (work) => void handled.push(...work),
    });
    loops.push(loop);
    await until(
      () => calls,
      (n) => n === 1,
    );
    queue.push(7);
    loop.wake();
    release();
    await until(
      () => handled,
      (h) => h.length === 1,
      5000,
    );
    expect(handled).toEqual([7]); // within the wait: the hour-long idle wait never began
  });

  it('claims again at once after work, and waits when `again` says so', async () => {
    const { queue, handled, claims } = await queueLoop('loop_test_again', { again: (w) => w.length > 1 });
    await until(claims, (n) => n >= 1);
    queue.push(1, 2, 3);
    await db.query(`NOTIFY loop_test_again`);
    await until(
      () => handled,
      (h) => h.length === 3,
    );
    await until(claims, (n) => n === 3); // the work, then one claim that found nothing
    queue.push(4);
    await db.query(`NOTIFY loop_test_again`);
    await until(
      () => handled,
      (h) => h.length === 4,
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(claims()).toBe(4); // one item is not `again`: no claim after it until the next wake
  });

  it('stops: the handle holding work finishes it (told to wrap up), and nothing is claimed after', async () => {
    let finish: () => void = () => {};
    const seen: boolean[] = [];
    const { loop, queue, claims } = await queueLoop('loop_test_stop', {
      handle: async (_work, stopping) => {
        await new Promise<void>((r) => (finish = r));
        seen.push(stopping());
      },
    });
    queue.push(1);
    loop.wake();
    await until(
      () => queue.length,
      (n) => n === 0,
    );
    const before = claims();
    const stopped = loop.stop(HOUR);
    finish();
    await stopped;
    expect(seen).toEqual([true]);
    expect(claims()).toBe(before);
  });

  it('hears its channel again after the LISTEN connection was lost', async () => {
    const { queue, handled, claims } = await queueLoop('loop_test_reconnect');
    await until(claims, (n) => n >= 1);
    const { rowCount } = await db.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`,
    );
    expect(rowCount).toBeGreaterThan(0);
    queue.push(5);
    // NOTIFYs sent while it reconnects are lost (the idle poll covers them): send until one lands.
    await until(
      async () => {
        await db.query(`NOTIFY loop_test_reconnect`);
        return handled.length;
      },
      (n) => n === 1,
      10_000,
    );
    expect(handled).toEqual([5]);
  });
});
