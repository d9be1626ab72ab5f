import type pg from 'pg';
import { notFound } from '../kit/errors.js';
import { queryRows, raw, type Sql, sql } from './query.js';
import type { Queryable } from './sql.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string) => UUID.test(value);

/**
 * Loads one row by id within the caller's project: the one way every module fetches a resource
 * by id. Another project's id, an unknown id and a malformed id are all the same 404, so nothing
 * reveals that a resource exists elsewhere. `extra` narrows further (e.g. sql`kind = ANY(${kinds})`).
 * `table` is a table name from the code, never input.
 */
export async function findInProject<T extends pg.QueryResultRow>(
  db: Queryable,
  table: string,
  projectId: string,
  id: string,
  what: string,
  extra: Sql = raw('true'),
): Promise<T> {
  if (!isUuid(id)) throw notFound(what);
  const rows = await queryRows<T>(
    db,
    sql`SELECT * FROM ${raw(table)} WHERE project_id = ${projectId} AND id = ${id} AND ${extra}`,
  );
  if (!rows[0]) throw notFound(what);
  return rows[0];
}
