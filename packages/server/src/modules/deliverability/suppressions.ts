import type { SuppressionListQuery, SuppressionReason } from '@pigeon/contract';
import type { z } from 'zod';
import { preparedRows, queryRows, raw, runStatement, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { decodeCursor, encodeCursor } from '../../kit/cursor.js';
import { notFound } from '../../kit/errors.js';

interface SuppressionRow {
  id: string;
  email: string;
  reason: SuppressionReason;
  detail: string | null;
  email_id: string | null;
  created_at: Date;
}

const toDto = (r: SuppressionRow) => ({
  id: r.id,
  email: r.email,
  reason: r.reason,
  detail: r.detail,
  emailId: r.email_id,
  createdAt: new Date(r.created_at).toISOString(),
});

/** The suppressed addresses among `emails`, with why; one indexed lookup. */
export async function suppressedAmong(
  db: Queryable,
  projectId: string,
  emails: string[],
): Promise<Map<string, SuppressionReason>> {
  if (emails.length === 0) return new Map();
  const rows = await preparedRows<{ email: string; reason: SuppressionReason }>(
    db,
    'suppressions.among',
    sql`SELECT email, reason FROM suppressions WHERE project_id = ${projectId} AND email = ANY(${emails}::text[])`,
  );
  return new Map(rows.map((r) => [r.email, r.reason]));
}

/** GET /suppressions: newest first (ids are v7), keyset pages. */
export async function listSuppressions(db: Queryable, projectId: string, q: z.output<typeof SuppressionListQuery>) {
  const after = q.cursor ? decodeCursor(q.cursor) : undefined;
  const where = sql`project_id = ${projectId}::uuid AND ${q.email ? sql`email = ${q.email}` : raw('true')}`;
  const page = after ? sql` AND id < ${after.id}::uuid` : raw('');
  const rows = await queryRows<SuppressionRow>(
    db,
    sql`SELECT * FROM suppressions WHERE ${where}${page} ORDER BY id DESC LIMIT ${q.limit + 1}`,
  );
  const hasMore = rows.length > q.limit;
  const data = rows.slice(0, q.limit);
  const last = data.at(-1);
  const [count] = q.cursor
    ? [{ n: 0 }]
    : await queryRows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM suppressions WHERE ${where}`);
  return {
    data: data.map(toDto),
    cursor: hasMore && last ? encodeCursor({ v: '', id: last.id }) : null,
    hasMore,
    total: count?.n ?? 0,
  };
}

/** DELETE /suppressions/:id: later sends go to the address again; the contact stays unsubscribed. */
export async function liftSuppression(db: Queryable, projectId: string, id: string): Promise<void> {
  const deleted = await runStatement(db, sql`DELETE FROM suppressions WHERE project_id = ${projectId} AND id = ${id}`);
  if (!deleted) throw notFound('Suppression');
}

/**
 * Before retention drops the `emails` partition of ids [`from`, `to`): clears `email_id` of at
 * most `batch` suppressions that reference it (the suppression itself stays); answers how many.
 */
export function forgetSuppressionEmails(db: Queryable, from: string, to: string, batch: number): Promise<number> {
  return runStatement(
    db,
    sql`UPDATE suppressions SET email_id = NULL WHERE id IN (SELECT id FROM suppressions
          WHERE email_id >= ${from}::uuid AND email_id < ${to}::uuid LIMIT ${batch})`,
  );
}
