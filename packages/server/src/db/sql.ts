import type pg from 'pg';

export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/**
 * Runs a named prepared statement: PostgreSQL parses and plans it once per connection, which
 * roughly halves its CPU per call on hot paths (DESIGN.md §7).
 */
export async function prepared<R extends pg.QueryResultRow>(
  db: Queryable,
  name: string,
  text: string,
  values: unknown[],
): Promise<R[]> {
  const result = await db.query<R>({ name, text, values });
  return result.rows;
}

/** Runs `work` in one transaction on one pooled connection. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Runs `work` in a transaction whose statements are cancelled after `timeoutMs`: a query shaped by
 * a user's input (a segment condition) must never hold the database. A cancelled statement
 * surfaces as PostgreSQL error 57014, which the error handler answers with 503 QUERY_TIMEOUT.
 * `workMemMb` lets such a query hash the contacts of an event filter instead of probing the events
 * index once per contact (the difference between ~1.3 s and ~0.3 s at a million contacts).
 */
export function withQueryLimits<T>(
  pool: pg.Pool,
  limits: { timeoutMs: number; workMemMb?: number },
  work: (client: pg.PoolClient) => Promise<T>,
) {
  return inTransaction(pool, async (client) => {
    await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(limits.timeoutMs))}`);
    if (limits.workMemMb) await client.query(`SET LOCAL work_mem = '${Math.floor(limits.workMemMb)}MB'`);
    return work(client);
  });
}
