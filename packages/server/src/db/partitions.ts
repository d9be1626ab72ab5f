import type pg from 'pg';
import type { Logger } from '../logger.js';
import { FIRST_ID } from './ids.js';
import { queryRows, raw, runStatement, type Sql, sql } from './query.js';
import { inTransaction } from './sql.js';

/** The time-partitioned history tables (one range partition a month on their UUIDv7 `id`). */
export const HISTORY_TABLES = ['emails', 'events'] as const;
export type HistoryTable = (typeof HISTORY_TABLES)[number];

/** Months of partitions kept ready ahead of the current one. */
export const MONTHS_AHEAD = 3;

/** How long partition DDL waits for its lock before giving up until the next run. */
const DDL_LOCK_TIMEOUT = '2s';

/**
 * Creates the partitions of the current month and the `monthsAhead` next ones that do not exist.
 * Returns the names created. Each is its own short transaction with a lock timeout, so a long
 * query on the table delays the job rather than queueing every writer behind it.
 */
export async function ensureHistoryPartitions(
  pool: pg.Pool,
  now = new Date(),
  monthsAhead = MONTHS_AHEAD,
): Promise<string[]> {
  const created: string[] = [];
  for (const table of HISTORY_TABLES) {
    for (let i = 0; i <= monthsAhead; i++) {
      const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + i, 1));
      const [row] = await inTransaction(pool, async (client) => {
        await client.query(`SET LOCAL lock_timeout = '${DDL_LOCK_TIMEOUT}'`);
        return queryRows<{ name: string | null }>(
          client,
          sql`SELECT history_partition_ensure(${table}, ${month.toISOString().slice(0, 10)}::date) AS name`,
        );
      });
      if (row?.name) created.push(row.name);
    }
  }
  return created;
}

export interface PartitionInfo {
  name: string;
  /** null for the DEFAULT partition. */
  from: string | null;
  to: string | null;
}

/** The partitions of a history table with their id bounds, oldest first, DEFAULT last. */
export async function historyPartitions(db: pg.Pool | pg.PoolClient, table: HistoryTable): Promise<PartitionInfo[]> {
  const rows = await queryRows<{ name: string; bound: string }>(
    db,
    sql`SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = ${table}::regclass`,
  );
  return rows
    .map(({ name, bound }) => {
      const m = /FROM \('([0-9a-f-]+)'\) TO \('([0-9a-f-]+)'\)/.exec(bound);
      return { name, from: m?.[1] ?? null, to: m?.[2] ?? null };
    })
    .sort((a, b) => (a.from === null ? 1 : b.from === null ? -1 : a.from.localeCompare(b.from)));
}

export interface MoveOptions {
  /** Rows per batch (one transaction each). */
  batch?: number;
  logger?: Logger;
}

/**
 * Moves the rows of the tables the partitioning migration renamed `<table>_unpartitioned` into
 * the partitioned tables, in batches of `batch` rows by id: each batch is one statement that
 * deletes the rows from the old table and inserts them into the new one, so it commits whole or
 * not at all and a run killed anywhere resumes where the last committed batch left off, every row
 * moved exactly once. When a table is empty its foreign keys are validated and it is dropped.
 * A no-op on a database created after the migration.
 */
export async function moveUnpartitionedHistory(pool: pg.Pool, opts: MoveOptions = {}): Promise<number> {
  const batch = opts.batch ?? 10_000;
  const [role] = await queryRows<{ superuser: boolean }>(
    pool,
    sql`SELECT current_setting('is_superuser') = 'on' AS superuser`,
  );
  const superuser = role?.superuser ?? false;
  let moved = 0;
  for (const table of HISTORY_TABLES) {
    const legacy = `${table}_unpartitioned`;
    const [exists] = await queryRows<{ ok: boolean }>(pool, sql`SELECT to_regclass(${legacy}) IS NOT NULL AS ok`);
    if (!exists?.ok) continue;
    const [total] = await queryRows<{ n: number }>(pool, sql`SELECT count(*)::int AS n FROM ${raw(legacy)}`);
    opts.logger?.info({ table, rows: total?.n }, 'moving history into monthly partitions');
    // By name: migrations after the conversion add columns to the new table only (they take their defaults).
    const columns = raw((await columnsOf(pool, legacy)).map((c) => `"${c.replaceAll('"', '""')}"`).join(', '));
    let after = FIRST_ID;
    let tableMoved = 0;
    for (;;) {
      const [last] = await inTransaction(pool, async (client) => {
        await client.query(`SET LOCAL pigeon.moving_history = 'on'`);
        // The rows were checked against their foreign keys when first written: a superuser skips
        // the checks (and the feed trigger) while moving them, about half of the work.
        if (superuser) await client.query(`SET LOCAL session_replication_role = replica`);
        // The batch is an id range (an index range scan), up to the batch-th id after the cursor.
        const [upper] = await queryRows<{ id: string }>(
          client,
          sql`SELECT id::text FROM ${raw(legacy)} WHERE id > ${after}::uuid ORDER BY id OFFSET ${batch - 1} LIMIT 1`,
        );
        const range = upper ? sql`id > ${after}::uuid AND id <= ${upper.id}::uuid` : sql`id > ${after}::uuid`;
        return queryRows<{ n: number; last: string | null }>(
          client,
          sql`WITH batch AS (DELETE FROM ${raw(legacy)} WHERE ${range} RETURNING *),
              ins AS (INSERT INTO ${raw(table)} (${columns}) SELECT ${columns} FROM batch RETURNING id)
              SELECT count(*)::int AS n, max(id::text) AS last FROM ins`,
        );
      });
      if (!last?.n || !last.last) {
        // Nothing after the cursor: done, once a pass from the lowest id finds nothing either.
        if (after === FIRST_ID) break;
        after = FIRST_ID;
        continue;
      }
      after = last.last;
      tableMoved += last.n;
      if (tableMoved % (batch * 50) < batch) opts.logger?.info({ table, moved: tableMoved }, 'moving history');
    }
    moved += tableMoved;
    await inTransaction(pool, async (client) => {
      if (table === 'emails') {
        await runStatement(
          client,
          sql`ALTER TABLE email_link_clicks VALIDATE CONSTRAINT email_link_clicks_email_id_fkey`,
        );
        await runStatement(client, sql`ALTER TABLE suppressions VALIDATE CONSTRAINT suppressions_email_id_fkey`);
      }
      await runStatement(client, sql`DROP TABLE ${raw(legacy)}`);
    });
    opts.logger?.info({ table, moved: tableMoved }, 'history moved into monthly partitions');
  }
  return moved;
}

/**
 * A condition on a history table's `id` implied by `created_at >= from`, so the planner skips the
 * partitions of the months before. An id is made by the process that recorded the row, when it
 * recorded it, and `created_at` is that moment or earlier (rows loaded with an older time): the
 * id is never older than its `created_at`, give or take the clocks' skew, which the day of slack
 * covers. No upper bound follows from `created_at < to` (a back-dated row has a newer id); the
 * caller keeps its exact `created_at` conditions.
 */
export const idsSince = (column: Sql, from: string | Date): Sql =>
  sql`${column} >= uuidv7_floor(${from}::timestamptz - interval '1 day')`;

/** A table's columns in their order. */
export async function columnsOf(db: pg.Pool, table: string): Promise<string[]> {
  const rows = await queryRows<{ name: string }>(
    db,
    sql`SELECT attname AS name FROM pg_attribute
        WHERE attrelid = ${table}::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
  );
  return rows.map((r) => r.name);
}
