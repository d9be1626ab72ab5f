import type { ContactListQuery } from '@pigeon/contract';
import type { z } from 'zod';
import type { Queryable } from '../../db/sql.js';
import { decodeCursor, encodeCursor, escapeLike } from '../../http/cursor.js';
import { type ContactRow, toContactDto } from './repository.js';

type ListQuery = z.output<typeof ContactListQuery>;

/**
 * Keyset pagination over (sort column, id): stable while rows are inserted or deleted between
 * pages, for either sort column and direction. `total` is counted on the first page only.
 */
export async function listContacts(db: Queryable, projectId: string, q: ListQuery) {
  const column = q.sort === 'email' ? 'email' : 'created_at';
  const op = q.dir === 'desc' ? '<' : '>';
  const values: unknown[] = [projectId];
  const filters = ['project_id = $1'];
  if (q.search) {
    values.push(`%${escapeLike(q.search.trim().toLowerCase())}%`);
    filters.push(`email LIKE $${values.length}`);
  }
  if (q.subscribed) {
    values.push(q.subscribed === 'true');
    filters.push(`subscribed = $${values.length}`);
  }
  const filterValues = [...values];
  const where = [...filters];
  if (q.cursor) {
    const cursor = decodeCursor(q.cursor);
    values.push(cursor.v, cursor.id);
    const cast = column === 'email' ? 'text' : 'timestamptz';
    where.push(`(${column}, id) ${op} ($${values.length - 1}::${cast}, $${values.length}::uuid)`);
  }
  values.push(q.limit + 1);
  const dir = q.dir === 'desc' ? 'DESC' : 'ASC';
  const page = await db.query<ContactRow & { sort_value: string }>(
    `SELECT *, ${column}::text AS sort_value FROM contacts WHERE ${where.join(' AND ')}
     ORDER BY ${column} ${dir}, id ${dir} LIMIT $${values.length}`,
    values,
  );
  const rows = page.rows.slice(0, q.limit);
  const hasMore = page.rows.length > q.limit;
  const last = rows.at(-1);
  const total = q.cursor ? 0 : await countContacts(db, projectId, q, filters, filterValues);
  return {
    data: rows.map(toContactDto),
    cursor: hasMore && last ? encodeCursor({ v: last.sort_value, id: last.id }) : null,
    hasMore,
    total,
  };
}

/**
 * Without a search the total comes from the trigger-maintained counts (exact, a few rows); a
 * search is counted directly, where the trigram index keeps it cheap for selective patterns.
 */
async function countContacts(db: Queryable, projectId: string, q: ListQuery, filters: string[], values: unknown[]) {
  if (!q.search) {
    const { rows } = await db.query<{ total: string; subscribed: string }>(
      'SELECT coalesce(sum(total), 0) AS total, coalesce(sum(subscribed), 0) AS subscribed FROM contact_counts WHERE project_id = $1',
      [projectId],
    );
    const total = Number(rows[0]?.total ?? 0);
    const subscribed = Number(rows[0]?.subscribed ?? 0);
    return q.subscribed === undefined ? total : q.subscribed === 'true' ? subscribed : total - subscribed;
  }
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM contacts WHERE ${filters.join(' AND ')}`,
    values,
  );
  return rows[0]?.n ?? 0;
}
