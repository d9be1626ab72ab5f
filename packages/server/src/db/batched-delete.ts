import type pg from 'pg';
import { runStatement, type Sql, sql } from './query.js';

/** Rows one clean-up statement removes at most: a few milliseconds of work, never a long lock or a WAL burst. */
export const CLEANUP_BATCH = 5_000;

export interface BatchedDelete {
  deleted: number;
  /** The most rows one statement removed (never more than the batch). */
  largestStatement: number;
}

/**
 * Deletes the rows of `table` matching `where` in statements of at most `batch` rows (picked by
 * ctid), until one deletes fewer. `where` is checked again on each row as it is deleted, so a row
 * changed in between (an expiry pushed back) is kept.
 */
export async function deleteInBatches(
  pool: pg.Pool,
  table: Sql,
  where: Sql,
  batch = CLEANUP_BATCH,
): Promise<BatchedDelete> {
  const result: BatchedDelete = { deleted: 0, largestStatement: 0 };
  for (;;) {
    const n = await runStatement(
      pool,
      sql`DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE ${where} LIMIT ${batch})) AND ${where}`,
    );
    result.deleted += n;
    result.largestStatement = Math.max(result.largestStatement, n);
    if (n < batch) return result;
  }
}
