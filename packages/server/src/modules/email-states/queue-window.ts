import type pg from 'pg';
import { FIRST_ID, highestIdAt, LAST_ID, lowestIdAt } from '../../db/ids.js';
import { historyPartitions } from '../../db/partitions.js';
import { queryRows, raw, runStatement, sql } from '../../db/query.js';
import { inTransaction } from '../../db/sql.js';
import { status } from './status-name.js';

/**
 * The range of `emails` ids that can hold mail on its way (QUEUED or SENDING). The delivery path's
 * statements name it so that PostgreSQL plans and locks only the partitions inside it: unbounded,
 * each claim planned and opened every monthly partition kept by retention (400 days by default,
 * and three months ahead) with their eleven indexes each, and its cost grew with the history (bench/results/
 * 2026-11-28-twenty-second-sitting.md).
 */
export interface QueueWindow {
  from: string;
  to: string;
}

/** Margins for ids made by clocks a little off this one's (ids come from app servers and PostgreSQL). */
const CLOCK_MARGIN_MS = 24 * 60 * 60 * 1000;
/** The ids of mail queued about now: a day either side of `now`. */
const recentIds = (now: number): QueueWindow => ({
  from: lowestIdAt(now - CLOCK_MARGIN_MS),
  to: highestIdAt(now + CLOCK_MARGIN_MS),
});
/** How long a process keeps the bounds before it looks again, when nothing says they moved. */
export const FLOOR_REFRESH_MS = 60_000;
/** The payload of the queue's NOTIFY when old mail became QUEUED again (`requeueFailedEmails`). */
export const REQUEUED_PAYLOAD = 'requeued';

/** Whether a partition of `emails` holds mail on its way: one probe per partial index (the queue's, the claims'). */
async function holdsMailOnItsWay(pool: pg.Pool, name: string): Promise<boolean> {
  const table = raw(name); // a name the partitions job made (`emails_p202611`), as retention uses them
  const [row] = await queryRows<{ some: boolean }>(
    pool,
    sql`SELECT EXISTS (SELECT 1 FROM ${table} WHERE status = ${status('QUEUED')})
            OR EXISTS (SELECT 1 FROM ${table} WHERE status = ${status('SENDING')}) AS some`,
  );
  return row?.some ?? false;
}

/** The ids of one format sort as text as they do as uuids. */
const lower = (a: string, b: string) => [a, b].sort()[0] as string;
const higher = (a: string, b: string) => [a, b].sort()[1] as string;

/**
 * The ids mail on its way can have: from the start of the oldest partition that holds some to the
 * end of the newest one, and never narrower than a day either side of `now`, so mail queued after
 * this look is inside. The whole table when the DEFAULT partition holds mail on its way (its rows
 * may have any id: months the partitions job missed, clocks far off). Only requeueing FAILED mail
 * makes an older row QUEUED again; it says so (`REQUEUED_PAYLOAD`).
 */
export async function queueBounds(pool: pg.Pool, now = Date.now()): Promise<QueueWindow> {
  const recent = recentIds(now);
  const partitions = await historyPartitions(pool, 'emails'); // oldest first, DEFAULT last
  const fallback = partitions.find((p) => p.from === null);
  // No bounds: a DEFAULT partition may hold any id.
  if (fallback && (await holdsMailOnItsWay(pool, fallback.name))) return { from: FIRST_ID, to: LAST_ID };
  const ranged = partitions.flatMap((p) =>
    p.from !== null && p.to !== null ? [{ ...p, from: p.from, to: p.to }] : [],
  );
  let { from, to } = recent;
  // Only partitions reaching past the recent range can widen it: older ones from the oldest, newer from the newest.
  for (const p of ranged.filter((r) => r.from < recent.from)) {
    if (await holdsMailOnItsWay(pool, p.name)) {
      from = lower(p.from, from);
      break;
    }
  }
  for (const p of ranged.filter((r) => r.to > recent.to).reverse()) {
    if (await holdsMailOnItsWay(pool, p.name)) {
      to = higher(p.to, to);
      break;
    }
  }
  return { from, to };
}

export interface QueueWindowSource {
  /** The window now: the bounds found at most `FLOOR_REFRESH_MS` ago, and at least up to a day past now. */
  current(): Promise<QueueWindow>;
  /** Old mail was queued again: the next `current()` looks for the bounds anew. */
  invalidate(): void;
}

/** One process's view of the queue window, its bounds shared by its loops and looked up once at a time. */
export function queueWindowSource(pool: pg.Pool, refreshMs = FLOOR_REFRESH_MS): QueueWindowSource {
  let known: { bounds: QueueWindow; at: number } | undefined;
  let looking: Promise<QueueWindow> | undefined;
  let generation = 0;
  const lookUp = () => {
    const started = generation;
    const at = Date.now();
    looking ??= queueBounds(pool, at)
      .then((bounds) => {
        // An invalidation during the look may concern a row it had already passed: look again next time.
        if (started === generation) known = { bounds, at };
        return bounds;
      })
      .finally(() => {
        looking = undefined;
      });
    return looking;
  };
  return {
    async current() {
      const now = Date.now();
      const bounds = known && now - known.at < refreshMs ? known.bounds : await lookUp();
      return { from: bounds.from, to: higher(bounds.to, highestIdAt(now + CLOCK_MARGIN_MS)) };
    },
    invalidate() {
      generation++;
      known = undefined;
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
  const { from, to } = recentIds(now);
  const partitions = (await historyPartitions(pool, 'emails')).filter(
    (p) => (p.from === null || p.from <= to) && (p.to === null || p.to > from),
  );
  for (const partition of partitions) {
    await inTransaction(pool, async (client) => {
      await client.query(`SET LOCAL lock_timeout = '2s'`);
      await runStatement(client, sql`ANALYZE ${raw(partition.name)}`);
    });
  }
}
