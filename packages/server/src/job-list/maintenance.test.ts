import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRevokedSessions } from '../../test/fixtures/auth.js';
import { deleteFeedCursors, insertContactChanges, insertFeedCursor } from '../../test/fixtures/change-feed.js';
import { insertIdempotencyKeys } from '../../test/fixtures/idempotency.js';
import { poolWithProject } from '../../test/helpers.js';
import { pruneChangeFeed } from '../modules/change-feed/feed.js';
import { deleteExpiredShortLived } from './maintenance.js';

const PROJECT = '01900000-0000-7000-8000-00000000c001';
let pool: pg.Pool;

const count = async (text: string) => Number((await pool.query<{ n: string }>(text)).rows[0]?.n);

beforeAll(async () => {
  pool = await poolWithProject(PROJECT);
});
afterAll(() => pool.end());

describe('short-lived tables', () => {
  it('removes expired keys and revocations in statements of at most the batch, keeping the live ones', async () => {
    await insertIdempotencyKeys(pool, PROJECT, 2510, 2500);
    await insertRevokedSessions(pool, 705, 700);
    const run = await deleteExpiredShortLived(pool, 300);
    expect(run.idempotencyKeys).toEqual({ deleted: 2500, largestStatement: 300 });
    expect(run.revokedSessions).toEqual({ deleted: 700, largestStatement: 300 });
    expect(await count('SELECT count(*) AS n FROM idempotency_keys')).toBe(10);
    expect(await count('SELECT count(*) AS n FROM revoked_sessions')).toBe(5);
    expect(await deleteExpiredShortLived(pool, 300)).toEqual({
      idempotencyKeys: { deleted: 0, largestStatement: 0 },
      revokedSessions: { deleted: 0, largestStatement: 0 },
    });
  });

  it('prunes the change feed up to the slowest consumer of each part, in batches', async () => {
    // Part 1: 1,000 changes, the slowest of two consumers at the 600th. Part 2: no consumer, kept.
    // (This database's own consumers are set aside.)
    await deleteFeedCursors(pool);
    await insertContactChanges(pool, PROJECT, { parts: [1, 2], txid: 5, count: 1000 });
    await insertFeedCursor(pool, { consumer: 'test.fast', part: 1, txid: 5, seq: 900 });
    await insertFeedCursor(pool, { consumer: 'test.slow', part: 1, txid: 5, seq: 600 });
    expect(await pruneChangeFeed(pool, 250)).toBe(600);
    expect(await count(`SELECT count(*) AS n FROM contact_changes WHERE part = 1`)).toBe(400);
    expect(await count(`SELECT min(seq) AS n FROM contact_changes WHERE part = 1`)).toBe(601);
    expect(await count(`SELECT count(*) AS n FROM contact_changes WHERE part = 2`)).toBe(1000);
  });
});
