import type pg from 'pg';
import { highestIdAt, lowestIdAt } from '../../db/ids.js';
import { historyPartitions } from '../../db/partitions.js';
import { queryRows, raw, sql } from '../../db/query.js';
import { inTransaction } from '../../db/sql.js';
import { status } from './service.js';

/**
 * The range of `emails` ids that can hold mail on its way (QUEUED or SENDING). The delivery path's
 * statements name it so that PostgreSQL plans and locks only the partitions inside it: unbounded,
 * each claim planned and opened every monthly partition kept by retention (two years of them by
 * default) with their eleven indexes each, and its cost grew with the history (bench/results/
 * 2026-11-28-twenty-second-sitting.md).
 */
export interface QueueWindow {
  from: string;
  to: string;
}

/** No lower bound: a DEFAULT partition holding mail on its way may hold any id. */
const FIRST_ID = lowestIdAt(0);
/** Margins for ids made by clocks a little off this one's (ids come from app servers and PostgreSQL). */
const CLOCK_MARGIN_MS = 24 * 60 * 60 * 1000;
/** How long a process keeps a floor before it looks again, when nothing says it moved down. */
export const FLOOR_REFRESH_MS = 60_000;
/** The payload of the queue's NOTIFY when old mail became QUEUED again (`requeueFailedEmails`). */
export const REQUEUED_PAYLOAD = 'requeued';

/**
 * The lowest id mail on its way can have: the start of the oldest partition that holds some (each
 * partition answers from its queue's partial indexes), and never above a day before `now`, so mail
 * queued after this look is inside. Unbounded when the DEFAULT partition holds mail on its way.
 * Only requeueing FAILED mail makes an older row QUEUED again; it says so (`REQUEUED_PAYLOAD`).
 */
export async function queueFloor(pool: pg.Pool, now = Date.now()): Promise<string> {
  const recent = lowestIdAt(now - CLOCK_MARGIN_MS);
  for (const partition of await historyPartitions(pool, 'emails')) {
    const table = raw(`"${partition.name.replace(/"/g, '""')}"`);
    // One probe per partial index (the queue's, the claims'): a partition of old mail costs two index probes.
    const [row] = await queryRows<{ some: boolean }>(
      pool,
      sql`SELECT EXISTS (SELECT 1 FROM ${table} WHERE status = ${status('QUEUED')})
              OR EXISTS (SELECT 1 FROM ${table} WHERE status = ${status('SENDING')}) AS some`,
    );
    if (!row?.some) continue;
    if (partition.from === null) return FIRST_ID;
    return [partition.from, recent].sort()[0] as string; // ids of one format sort as text as they do as uuids
  }
  return recent;
}

export interface QueueWindowSource {
  /** The window now: the floor found at most `FLOOR_REFRESH_MS` ago, up to a day past now. */
  current(): Promise<QueueWindow>;
  /** Old mail was queued again: the next `current()` looks for the floor anew. */
  invalidate(): void;
}

/** One process's view of the queue window, the floor shared by its loops and looked up once at a time. */
export function queueWindowSource(pool: pg.Pool, refreshMs = FLOOR_REFRESH_MS): QueueWindowSource {
  let floor: { id: string; at: number } | undefined;
  let looking: Promise<string> | undefined;
  let generation = 0;
  const lookUp = () => {
    const started = generation;
    const at = Date.now();
    looking ??= queueFloor(pool, at)
      .then((id) => {
        // An invalidation during the look may concern a row it had already passed: look again next time.
        if (started === generation) floor = { id, at };
        return id;
      })
      .finally(() => {
        looking = undefined;
      });
    return looking;
  };
  return {
    async current() {
      const now = Date.now();
      const from = floor && now - floor.at < refreshMs ? floor.id : await lookUp();
      return { from, to: highestIdAt(now + CLOCK_MARGIN_MS) };
    },
    invalidate() {
      generation++;
      floor = undefined;
    },
  };
}

/** Mail queued in one statement from this many rows on is followed by fresh statistics (`analyzeQueuePartitions`). */
export const BULK_QUEUED = 1_000;

/**
 * Gathers the planner's statistics of the partitions that take mail queued now, after a bulk
 * insert (a campaign's freeze) has committed. The claims plan their window's partition alone, with
 * that partition's statistics: until autovacuum's next analyze (up to a minute, more on a busy
 * server), a partition analyzed small and then given 100,000 rows made each claim read and sort all
 * of them (110–130 ms a claim instead of ~1 ms, measured in bench/campaign-db.mjs). A short lock
 * timeout: an analyze already running on it will do.
 */
export async function analyzeQueuePartitions(pool: pg.Pool, now = Date.now()): Promise<void> {
  const from = lowestIdAt(now - CLOCK_MARGIN_MS);
  const to = highestIdAt(now + CLOCK_MARGIN_MS);
  const partitions = (await historyPartitions(pool, 'emails')).filter(
    (p) => (p.from === null || p.from <= to) && (p.to === null || p.to > from),
  );
  for (const partition of partitions) {
    await inTransaction(pool, async (client) => {
      await client.query(`SET LOCAL lock_timeout = '2s'`);
      await client.query(`ANALYZE "${partition.name.replace(/"/g, '""')}"`);
    });
  }
}
