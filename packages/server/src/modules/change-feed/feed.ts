import type pg from 'pg';
import { inTransaction } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';

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
  createdAt: Date;
}

export interface FeedConsumer {
  /** Stable name: the cursor rows are keyed by it. */
  name: string;
  /**
   * Its pauses are this many times the feed's `pollMs` (default 1): a consumer that need not be
   * quick (analytics counts) reads bigger batches less often and costs the database less.
   */
  pollFactor?: number;
  /** Handles a batch inside the transaction that also advances the cursor. */
  handle(client: pg.PoolClient, changes: ContactChange[], deps: AppDeps): Promise<void>;
}

export interface FeedOptions {
  pollMs: number;
  batchSize: number;
  /** Parts processed at once by one process (each holds a pooled connection while it runs). */
  concurrency: number;
}

interface ChangeRow {
  txid: string;
  seq: string;
  project_id: string;
  contact_id: string;
  kind: ContactChange['kind'];
  event_id: string | null;
  name: string | null;
  created_at: Date;
}

/** New consumers start at the feed's present, not at its retained past. */
export async function registerConsumer(pool: pg.Pool, name: string): Promise<void> {
  await pool.query(
    `INSERT INTO change_feed_cursors (consumer, part, txid)
     SELECT $1, part, pg_snapshot_xmin(pg_current_snapshot()) FROM generate_series(0, $2 - 1) AS part
     ON CONFLICT DO NOTHING`,
    [name, PARTS],
  );
}

/** Processes at most one batch of one part; returns how many changes it handled (0: none, or part busy). */
export async function processPart(deps: AppDeps, consumer: FeedConsumer, part: number, batchSize: number) {
  return inTransaction(deps.db.pool, async (client) => {
    const { rows: locked } = await client.query<{ ok: boolean }>(
      'SELECT pg_try_advisory_xact_lock(hashtext($1), $2) AS ok',
      [`change-feed:${consumer.name}`, part],
    );
    if (!locked[0]?.ok) return 0;
    const { rows: cursors } = await client.query<{ txid: string; seq: string }>(
      'SELECT txid::text, seq::text FROM change_feed_cursors WHERE consumer = $1 AND part = $2',
      [consumer.name, part],
    );
    const cursor = cursors[0];
    if (!cursor) return 0;
    const { rows } = await client.query<ChangeRow>({
      name: 'change-feed.read',
      // ORDER BY names the table's columns: a bare `txid` would be the text output column, and
      // '10' sorts before '9' (a batch would end on the wrong row: changes read twice or skipped).
      text: `SELECT ch.txid::text AS txid, ch.seq::text AS seq, project_id, contact_id, kind, event_id, name, created_at
             FROM contact_changes ch
             WHERE part = $1 AND (ch.txid, ch.seq) > ($2::xid8, $3::bigint) AND ch.txid < pg_snapshot_xmin(pg_current_snapshot())
             ORDER BY ch.txid, ch.seq LIMIT $4`,
      values: [part, cursor.txid, cursor.seq, batchSize],
    });
    const last = rows.at(-1);
    if (!last) return 0;
    await consumer.handle(client, rows.map(toChange), deps);
    await client.query(
      `UPDATE change_feed_cursors SET txid = $3::xid8, seq = $4, updated_at = now() WHERE consumer = $1 AND part = $2`,
      [consumer.name, part, last.txid, last.seq],
    );
    return rows.length;
  });
}

const toChange = (r: ChangeRow): ContactChange => ({
  txid: r.txid,
  seq: r.seq,
  projectId: r.project_id,
  contactId: r.contact_id,
  kind: r.kind,
  eventId: r.event_id,
  name: r.name,
  createdAt: r.created_at,
});

export interface RunningFeed {
  stop(): Promise<void>;
}

/**
 * One loop per consumer in this process: each round visits every part (`concurrency` at a time)
 * and the loop sleeps `pollMs` after a round that found nothing. Several processes run the same
 * loops and share the parts through the advisory locks.
 */
export async function startChangeFeed(
  deps: AppDeps,
  consumers: FeedConsumer[],
  opts: FeedOptions,
): Promise<RunningFeed> {
  const logger = deps.logger.child({ component: 'change-feed' });
  let running = true;
  const wakers = new Set<() => void>();
  for (const consumer of consumers) await registerConsumer(deps.db.pool, consumer.name);

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wakeUp = () => {
        clearTimeout(timer);
        wakers.delete(wakeUp);
        resolve();
      };
      const timer = setTimeout(wakeUp, ms);
      wakers.add(wakeUp);
    });

  /**
   * One round: every part once, `concurrency` parts at a time, each in its own transaction.
   * Says whether some part had a full batch (a backlog to work off at once).
   */
  const round = async (consumer: FeedConsumer) => {
    const order = Array.from({ length: PARTS }, (_, i) => (i + Math.floor(Math.random() * PARTS)) % PARTS);
    let backlog = false;
    let handled = 0;
    const next = async (): Promise<void> => {
      const part = order.shift();
      if (part === undefined || !running) return;
      try {
        const n = await processPart(deps, consumer, part, opts.batchSize);
        handled += n;
        if (n >= opts.batchSize) backlog = true;
      } catch (err) {
        logger.error({ err, consumer: consumer.name, part }, 'change feed batch failed; it will be retried');
      }
      return next();
    };
    await Promise.all(Array.from({ length: Math.min(PARTS, opts.concurrency) }, next));
    return { backlog, handled };
  };

  // Without a backlog the loop pauses, so changes gather into batches (a round of tiny batches
  // costs the database more per change than the writes it follows): half of `pollMs` while
  // changes keep coming, all of it when a round found none.
  const loop = async (consumer: FeedConsumer) => {
    const pollMs = opts.pollMs * (consumer.pollFactor ?? 1);
    while (running) {
      // One cheap read says whether a round has anything to do: an idle feed costs a statement
      // per consumer and pause, not a transaction per part.
      const pending = await hasPending(deps.db.pool, consumer.name).catch((err) => {
        logger.error({ err, consumer: consumer.name }, 'change feed check failed');
        return false;
      });
      const { backlog, handled } = pending ? await round(consumer) : { backlog: false, handled: 0 };
      if (!backlog && running) await sleep(handled > 0 ? pollMs / 2 : pollMs);
    }
  };

  const loops = consumers.map(loop);
  return {
    async stop() {
      running = false;
      for (const wakeUp of [...wakers]) wakeUp();
      await Promise.allSettled(loops);
    },
  };
}

/** Whether some part has changes past the consumer's cursor that it may read now. */
async function hasPending(pool: pg.Pool, consumer: string): Promise<boolean> {
  const { rows } = await pool.query<{ pending: boolean }>({
    name: 'change-feed.pending',
    text: `SELECT EXISTS (
             SELECT 1 FROM change_feed_cursors c
             WHERE c.consumer = $1 AND EXISTS (
               SELECT 1 FROM contact_changes ch
               WHERE ch.part = c.part AND (ch.txid, ch.seq) > (c.txid, c.seq)
                 AND ch.txid < pg_snapshot_xmin(pg_current_snapshot()))) AS pending`,
    values: [consumer],
  });
  return rows[0]?.pending ?? false;
}

/** Drops rows every consumer has passed. */
export async function pruneChangeFeed(pool: pg.Pool): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM contact_changes ch
     USING (SELECT DISTINCT ON (part) part, txid, seq FROM change_feed_cursors ORDER BY part, txid, seq) AS slowest
     WHERE ch.part = slowest.part AND (ch.txid, ch.seq) <= (slowest.txid, slowest.seq)`,
  );
  return rowCount ?? 0;
}
