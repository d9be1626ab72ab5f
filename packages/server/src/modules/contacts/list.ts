import type { ContactListQuery } from '@pigeon/contract';
import type { z } from 'zod';
import { and, queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { decodeCursor, encodeCursor, escapeLike } from '../../kit/cursor.js';
import { type ContactRow, toContactDto } from './rows.js';

type ListQuery = z.output<typeof ContactListQuery>;

/**
 * Keyset pagination over (sort column, id): stable while rows are inserted or deleted between
 * pages, for either sort column and direction. `total` is counted on the first page only.
 */
export async function listContacts(db: Queryable, projectId: string, q: ListQuery) {
  const column = raw(q.sort === 'email' ? 'email' : 'created_at');
  const op = raw(q.dir === 'desc' ? '<' : '>');
  const filters = [sql`project_id = ${projectId}`];
  if (q.search) filters.push(sql`email LIKE ${`%${escapeLike(q.search.trim().toLowerCase())}%`}`);
  if (q.subscribed) filters.push(sql`subscribed = ${q.subscribed === 'true'}`);
  const where = [...filters];
  if (q.cursor) {
    const cursor = decodeCursor(q.cursor);
    const cast = raw(q.sort === 'email' ? 'text' : 'timestamptz');
    where.push(sql`(${column}, id) ${op} (${cursor.v}::${cast}, ${cursor.id}::uuid)`);
  }
  const dir = raw(q.dir === 'desc' ? 'DESC' : 'ASC');
  const page = await queryRows<ContactRow & { sort_value: string }>(
    db,
    sql`SELECT *, ${column}::text AS sort_value FROM contacts WHERE ${and(where)}
        ORDER BY ${column} ${dir}, id ${dir} LIMIT ${q.limit + 1}`,
  );
  const rows = page.slice(0, q.limit);
  const hasMore = page.length > q.limit;
  const last = rows.at(-1);
  const total = q.cursor ? 0 : await countContacts(db, projectId, q, filters);
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
async function countContacts(db: Queryable, projectId: string, q: ListQuery, filters: Sql[]) {
  if (!q.search) {
    const [counts] = await queryRows<{ total: string; subscribed: string }>(
      db,
      sql`SELECT coalesce(sum(total), 0) AS total, coalesce(sum(subscribed), 0) AS subscribed
          FROM contact_counts WHERE project_id = ${projectId}`,
    );
    const total = Number(counts?.total ?? 0);
    const subscribed = Number(counts?.subscribed ?? 0);
    return q.subscribed === undefined ? total : q.subscribed === 'true' ? subscribed : total - subscribed;
  }
  const [counted] = await queryRows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM contacts WHERE ${and(filters)}`,
  );
  return counted?.n ?? 0;
}
