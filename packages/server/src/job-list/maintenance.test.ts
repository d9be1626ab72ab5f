import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    await pool.query(
      `INSERT INTO idempotency_keys (project_id, key, request, expires_at)
       SELECT $1, 'k' || g, 'POST /v1/track', now() + CASE WHEN g <= 2500 THEN interval '-1 minute' ELSE interval '1 hour' END
       FROM generate_series(1, 2510) g`,
      [PROJECT],
    );
    await pool.query(
      `INSERT INTO revoked_sessions (jti, expires_at)
       SELECT gen_random_uuid(), now() + CASE WHEN g <= 700 THEN interval '-1 second' ELSE interval '1 day' END
       FROM generate_series(1, 705) g`,
    );
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
    await pool.query('DELETE FROM change_feed_cursors');
    await pool.query(
      `INSERT INTO contact_changes (part, txid, seq, project_id, contact_id, kind)
       OVERRIDING SYSTEM VALUE
       SELECT p, '5'::xid8, g, $1, gen_random_uuid(), 'created' FROM generate_series(1, 1000) g, (VALUES (1), (2)) v(p)`,
      [PROJECT],
    );
    await pool.query(
      `INSERT INTO change_feed_cursors (consumer, part, txid, seq) VALUES
         ('test.fast', 1, '5'::xid8, 900), ('test.slow', 1, '5'::xid8, 600)`,
    );
    expect(await pruneChangeFeed(pool, 250)).toBe(600);
    expect(await count(`SELECT count(*) AS n FROM contact_changes WHERE part = 1`)).toBe(400);
    expect(await count(`SELECT min(seq) AS n FROM contact_changes WHERE part = 1`)).toBe(601);
    expect(await count(`SELECT count(*) AS n FROM contact_changes WHERE part = 2`)).toBe(1000);
  });
});
