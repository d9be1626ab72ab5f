import type pg from 'pg';
import { notFound } from '../http/errors.js';
import type { Queryable } from './sql.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string) => UUID.test(value);

/**
 * Loads one row by id within the caller's project: the one way every module fetches a resource
 * by id. Another project's id, an unknown id and a malformed id are all the same 404, so nothing
 * reveals that a resource exists elsewhere. `extra` narrows further (e.g. a job's kind).
 */
export async function findInProject<T extends pg.QueryResultRow>(
  db: Queryable,
  table: string,
  projectId: string,
  id: string,
  what: string,
  extra?: { where: string; values: unknown[] },
): Promise<T> {
  if (!isUuid(id)) throw notFound(what);
  const { rows } = await db.query<T>(
    `SELECT * FROM ${table} WHERE project_id = $1 AND id = $2${extra ? ` AND ${extra.where}` : ''}`,
    [projectId, id, ...(extra?.values ?? [])],
  );
  if (!rows[0]) throw notFound(what);
  return rows[0];
}
