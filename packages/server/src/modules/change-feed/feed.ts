import type pg from 'pg';
import { CLEANUP_BATCH, deleteInBatches } from '../../db/batched-delete.js';
import { preparedRows, queryRows, raw, type Sql, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import type { ListenHub } from '../../jobs/listen-hub.js';
import { startLoop } from '../../jobs/loop.js';
import { CHANGE_FEED_CHANNEL } from './waker.js';

/**
 * The contact change feed: one durable, ordered record of everything that happens to contacts
 * (every event insert, every change of a contact's email, data or subscription), written by
 * triggers in the writer's own transaction, so no writer can forget it and none pays a round trip.
 *
 * Rows are ordered by (txid, seq) and split into PARTS by contact. A consumer keeps one cursor
 * per part and reads only rows whose transaction is older than its snapshot's xmin: every such
 * transaction has ended, so no row can later appear behind the cursor (commit order is safe).
 * A part is processed under a transaction-scoped advisory lock, and the cursor moves in the same
 * transaction as the consumer's writes: across crashes and several workers, each change is
 * handled once.
 */
export const PARTS = 8;

export interface ContactChange {
  txid: string;
  seq: string;
  projectId: string;
  contactId: string;
  kind: 'event' | 'created' | 'updated';
  eventId: string | null;
  name: string | null;
}

export interface FeedConsumer {
  /** Stable name: the cursor rows are keyed by it. */
  name: string;
  /**
   * Its pauses are this many times the feed's `pollMs` (default 1): a consumer that need not be
   * quick (analytics counts) reads bigger batches less often and costs the database less.
   */
  pollFactor?: number;
  /**
   * The changes it wants, as a condition on the `contact_changes` row `ch` (fixed SQL: it becomes
   * part of a prepared statement). The others are passed over in the database: the cursor moves
   * past them, but they are never sent to the process or handled. Default: every change.
   */
  wants?: Sql;
  /**
   * Handles a batch inside the transaction that also advances the cursor. It may answer what to
   * do once that transaction has committed (never called when it rolls back).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: most consumers return nothing (an async function's Promise<void>)
  handle(client: pg.PoolClient, changes: ContactChange[], deps: AppDeps): Promise<void | (() => void)>;
}

export interface FeedOptions {
  pollMs: number;
  batchSize: number;
  /** Parts processed at once by one process (each holds a pooled connection while it runs). */
  concurrency: number;
}

interface ChangeRow {
  /** True for the one row per part that only says where its batch ended and how long it was. */
  is_end: boolean;
  part: number;
  txid: string;
  seq: string;
  n: number | null;
  project_id: string;
  contact_id: string;
  kind: ContactChange['kind'];
  event_id: string | null;
  name: string | null;
}

/** New consumers start at the feed's present, not at its retained past. */
export async function registerConsumer(db: Queryable, name: string): Promise<void> {
  await queryRows(
    db,
    sql`INSERT INTO change_feed_cursors (consumer, part, txid)
     SELECT ${name}, part, pg_snapshot_xmin(pg_current_snapshot()) FROM generate_series(0, ${PARTS} - 1) AS part
     ON CONFLICT DO NOTHING`,
  );
}

/** Processes at most one batch of one part; returns how many changes it handled (0: none, or part busy). */
export async function processPart(deps: AppDeps, consumer: FeedConsumer, part: number, batchSize: number) {
  return (await processParts(deps, consumer, [part], batchSize)).handled;
}

/**
 * Processes at most one batch of each of `parts` in ONE transaction: the parts another process
 * holds are skipped, the others are read together (each from its own cursor, at most `batchSize`
 * rows each), the changes the consumer wants are handled in one call, and the cursors move
 * together past every row read. A transaction per part cost the database more than the changes
 * it read (eight parts × three consumers, several times a second, each six statements); this is
 * four statements however many parts. `backlog`: some part had a full batch, so more is waiting.
 */
export async function processParts(
  deps: AppDeps,
  consumer: FeedConsumer,
  parts: number[],
  batchSize: number,
): Promise<{ handled: number; backlog: boolean }> {
  const afterCommit: { run?: () => void } = {};
  const result = await inTransaction(deps.db.pool, async (client) => {
    const locked = await preparedRows<{ part: number }>(
      client,
      'change-feed.lock',
      sql`SELECT part FROM unnest(${parts}::smallint[]) AS part WHERE pg_try_advisory_xact_lock(hashtext(${`change-feed:${consumer.name}`}), part)`,
    );
    if (locked.length === 0) return { handled: 0, backlog: false };
    // A statement of its own, after the locks: its snapshot sees the cursor the part's previous
    // holder committed (read in the locking statement, it could be the one from before).
    const rows = await preparedRows<ChangeRow>(
      client,
      `change-feed.read.${consumer.name}`,
      readBatch(
        consumer,
        locked.map((r) => r.part),
        batchSize,
      ),
    );
    const ends = rows.filter((r) => r.is_end);
    if (ends.length === 0) return { handled: 0, backlog: false };
    const changes = rows.filter((r) => !r.is_end).map(toChange);
    const then = changes.length > 0 ? await consumer.handle(client, changes, deps) : undefined;
    if (typeof then === 'function') afterCommit.run = then;
    await preparedRows(
      client,
      'change-feed.advance',
      sql`UPDATE change_feed_cursors c SET txid = m.txid, seq = m.seq, updated_at = now()
             FROM unnest(${ends.map((r) => r.part)}::smallint[], ${ends.map((r) => r.txid)}::xid8[], ${ends.map((r) => r.seq)}::bigint[]) AS m(part, txid, seq)
             WHERE c.consumer = ${consumer.name} AND c.part = m.part`,
    );
    return { handled: changes.length, backlog: ends.some((r) => (r.n ?? 0) >= batchSize) };
  });
  afterCommit.run?.();
  return result;
}

/**
 * The batch of each part (its next `batchSize` readable rows), as one row per part saying where
 * the batch ends and how long it is, then the rows the consumer wants, in (part, txid, seq) order.
 * Sorting happens on the xid8 and bigint columns themselves: by their text, txid '10' would sort
 * before '9' and a batch could end on the wrong row (changes read twice or skipped).
 */
function readBatch(consumer: FeedConsumer, parts: number[], batchSize: number): Sql {
  return sql`
    WITH batch AS MATERIALIZED (
      SELECT c.part, ch.txid, ch.seq, ch.project_id, ch.contact_id, ch.kind, ch.event_id, ch.name
      FROM change_feed_cursors c CROSS JOIN LATERAL (
        SELECT * FROM contact_changes ch
        WHERE ch.part = c.part AND (ch.txid, ch.seq) > (c.txid, c.seq)
          AND ch.txid < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY ch.txid, ch.seq LIMIT ${batchSize}::int
      ) ch
      WHERE c.consumer = ${consumer.name} AND c.part = ANY(${parts}::smallint[])
    )
    SELECT * FROM (
      SELECT DISTINCT ON (part) true AS is_end, part, txid, seq, count(*) OVER (PARTITION BY part)::int AS n,
             NULL::uuid AS project_id, NULL::uuid AS contact_id, NULL::text AS kind, NULL::uuid AS event_id, NULL::text AS name
      FROM batch ORDER BY part, txid DESC, seq DESC
    ) ends
    UNION ALL
    SELECT false, ch.part, ch.txid, ch.seq, NULL, ch.project_id, ch.contact_id, ch.kind, ch.event_id, ch.name
    FROM batch ch WHERE ${consumer.wants ?? raw('true')}
    ORDER BY is_end, part, txid, seq`;
}

const toChange = (r: ChangeRow): ContactChange => ({
  txid: r.txid,
  seq: r.seq,
  projectId: r.project_id,
  contactId: r.contact_id,
  kind: r.kind,
  eventId: r.event_id,
  name: r.name,
});

/**
 * The parts of one round, each exactly once, from a random first one (so that several processes do
 * not all start with the same). An offset drawn per element instead visited some parts twice and
 * others never: any given part was left out of a third of the rounds, and a consumer that pauses
 * 10 s between rounds (analytics) could leave a change unread for 30 s and more.
 */
export function roundOrder(random: () => number = Math.random): number[] {
  const first = Math.floor(random() * PARTS);
  return Array.from({ length: PARTS }, (_, i) => (first + i) % PARTS);
}

export interface RunningFeed {
  stop(): Promise<void>;
}

/**
 * One loop (`jobs/loop.ts`) per consumer in this process: each claim is a round that visits every
 * part (in `concurrency` transactions); several processes run the same loops and share the parts
 * through the advisory locks. Without a backlog the loop pauses, so changes gather into batches (a
 * round of tiny batches costs the database more per change than the writes it follows): after a
 * round, a rest of half of `pollMs` (all of it when the round handled nothing the consumer wants);
 * with nothing readable, a wait of `pollMs` that a NOTIFY on CHANGE_FEED_CHANNEL ends. Consumers
 * with a `pollFactor` above 1 are not in a hurry: they do not wake.
 */
export async function startChangeFeed(
  deps: AppDeps,
  hub: ListenHub,
  consumers: FeedConsumer[],
  opts: FeedOptions,
): Promise<RunningFeed> {
  for (const consumer of consumers) await registerConsumer(deps.db.pool, consumer.name);
  const loops = await Promise.all(
    consumers.map((consumer) => {
      const pollMs = opts.pollMs * (consumer.pollFactor ?? 1);
      return startLoop(hub, deps.logger, {
        name: `change-feed.${consumer.name}`,
        channels: (consumer.pollFactor ?? 1) > 1 ? [] : [CHANGE_FEED_CHANNEL],
        claim: () => feedRound(deps, consumer, opts),
        again: (round) => round.backlog,
        // A round that read only changes the consumer does not want rests as long as an idle wait:
        // woken by every track, a consumer that wants none of them would run a round per NOTIFY.
        restMs: (round) => (round.handled > 0 ? pollMs / 2 : pollMs),
        idleMs: pollMs,
        errorPauseMs: pollMs,
      });
    }),
  );
  return { stop: async () => void (await Promise.all(loops.map((l) => l.stop(Number.POSITIVE_INFINITY)))) };
}

/**
 * One round of a consumer, or undefined when nothing was readable. One cheap read first says
 * whether a round has anything to do: an idle feed costs a statement per consumer and pause, not a
 * transaction per part. Then every part once, split into `concurrency` groups, each group one
 * transaction (the groups run at once, each on its own pooled connection), in `roundOrder`.
 */
async function feedRound(deps: AppDeps, consumer: FeedConsumer, opts: FeedOptions) {
  if (!(await hasPending(deps.db.pool, consumer.name))) return undefined;
  const order = roundOrder();
  const groups = Math.min(PARTS, opts.concurrency);
  const results = await Promise.all(
    Array.from({ length: groups }, async (_, g) => {
      const parts = order.filter((_, i) => i % groups === g);
      try {
        return await processParts(deps, consumer, parts, opts.batchSize);
      } catch (err) {
        deps.logger.error({ err, consumer: consumer.name, parts }, 'change feed batch failed; it will be retried');
        return { handled: 0, backlog: false };
      }
    }),
  );
  return { handled: results.reduce((sum, r) => sum + r.handled, 0), backlog: results.some((r) => r.backlog) };
}

/** Whether some part has changes past the consumer's cursor that it may read now. */
async function hasPending(pool: pg.Pool, consumer: string): Promise<boolean> {
  const rows = await preparedRows<{ pending: boolean }>(
    pool,
    'change-feed.pending',
    sql`SELECT EXISTS (
             SELECT 1 FROM change_feed_cursors c
             WHERE c.consumer = ${consumer} AND EXISTS (
               SELECT 1 FROM contact_changes ch
               WHERE ch.part = c.part AND (ch.txid, ch.seq) > (c.txid, c.seq)
                 AND ch.txid < pg_snapshot_xmin(pg_current_snapshot()))) AS pending`,
  );
  return rows[0]?.pending ?? false;
}

/**
 * Drops rows every consumer has passed, in statements of at most `batch` rows: per part, up to
 * the slowest cursor of that part, read once (cursors only move forward). A constant bound per
 * part lets each statement walk the primary key's range; a bound looked up per row (a subquery
 * on the cursors) cost 3–5 times as much PostgreSQL time per pruned row.
 */
export async function pruneChangeFeed(pool: pg.Pool, batch = CLEANUP_BATCH): Promise<number> {
  const bounds = await queryRows<{ part: number; txid: string; seq: string }>(
    pool,
    sql`SELECT DISTINCT ON (part) part, txid::text, seq FROM change_feed_cursors ORDER BY part, txid, seq`,
  );
  let deleted = 0;
  for (const b of bounds) {
    const passed = sql`part = ${b.part}::smallint AND (txid, seq) <= (${b.txid}::xid8, ${b.seq}::bigint)`;
    deleted += (await deleteInBatches(pool, raw('contact_changes'), passed, batch)).deleted;
  }
  return deleted;
}

/**
 * Per consumer, the age of the oldest change it has not read yet (0: caught up): one index probe
 * per part and consumer (the next row after its cursor).
 */
export async function feedLag(db: Queryable): Promise<Array<{ consumer: string; lagSeconds: number }>> {
  const rows = await queryRows<{ consumer: string; lag: number }>(
    db,
    sql`SELECT c.consumer, COALESCE(max(extract(epoch FROM now() - nxt.created_at)), 0)::float8 AS lag
        FROM change_feed_cursors c LEFT JOIN LATERAL (
          SELECT ch.created_at FROM contact_changes ch
          WHERE ch.part = c.part AND (ch.txid, ch.seq) > (c.txid, c.seq)
          ORDER BY ch.txid, ch.seq LIMIT 1
        ) nxt ON true
        GROUP BY c.consumer ORDER BY c.consumer`,
  );
  return rows.map((r) => ({ consumer: r.consumer, lagSeconds: Math.max(0, r.lag) }));
}
