import type pg from 'pg';
import { type BatchedDelete, deleteInBatches } from '../../db/batched-delete.js';
import { queryRows, raw, runStatement, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { status } from './service.js';

/**
 * The writes retention makes on `emails` and `email_link_clicks` (their owner is this module):
 * retention (modules/retention) decides what is old and calls these, one bounded statement at a
 * time. Mail still on its way (`IN_FLIGHT`) keeps its row and its content whatever its age.
 */
export const IN_FLIGHT: Sql = sql`status IN (${status('QUEUED')}, ${status('SENDING')})`;

/** Deletes at most `batch` of the project's emails older than the id `before` that are not in flight; answers how many. */
export function deleteExpiredEmails(db: Queryable, projectId: string, before: string, batch: number): Promise<number> {
  return runStatement(
    db,
    sql`DELETE FROM emails WHERE id IN (SELECT id FROM emails
          WHERE project_id = ${projectId}::uuid AND id < ${before}::uuid AND NOT ${IN_FLIGHT} LIMIT ${batch})`,
  );
}

export interface ContentBatch {
  /** Emails picked (at most the batch). */
  n: number;
  /** Of those, the ones whose content was emptied now. */
  cleared: number;
  /** The highest id picked; null when none was. */
  last: string | null;
}

/**
 * Empties the content (html, text, headers, attachments, a submitted message's MIME) of the
 * project's next `batch` emails, oldest first, with ids in [`from`, `until`), skipping mail in
 * flight. Addresses, subject, status, times and counters stay.
 */
export async function clearEmailContent(
  db: Queryable,
  projectId: string,
  from: string,
  until: string,
  batch: number,
): Promise<ContentBatch> {
  const [row] = await queryRows<ContentBatch>(
    db,
    sql`WITH picked AS (
          SELECT id FROM emails WHERE project_id = ${projectId}::uuid AND id >= ${from}::uuid AND id < ${until}::uuid
          ORDER BY id LIMIT ${batch}
        ), cleared AS (
          UPDATE emails e SET html = '', text = '', headers = '{}', attachments = '[]', mime = NULL
          FROM picked WHERE e.id = picked.id AND NOT e.${IN_FLIGHT}
            AND (e.html <> '' OR e.text <> '' OR e.headers <> '{}' OR e.attachments <> '[]' OR e.mime IS NOT NULL)
          RETURNING 1
        )
        SELECT count(*)::int AS n, (SELECT count(*)::int FROM cleared) AS cleared, max(id::text) AS last FROM picked`,
  );
  return { n: row?.n ?? 0, cleared: row?.cleared ?? 0, last: row?.last ?? null };
}

/**
 * SQL true when content retention has emptied the email aliased `alias`: retention clears content
 * oldest first and records in its `retention_progress` the id below which a project is done (never
 * past a message in flight), so the email's id against that mark says it without a column.
 */
export const contentClearedSql = (alias: string): Sql =>
  sql`EXISTS (SELECT 1 FROM retention_progress rp
              WHERE rp.project_id = ${raw(alias)}.project_id AND ${raw(alias)}.id < rp.content_cleared_before)`;

/** Deletes the link clicks of the emails with ids in [`from`, `to`), in statements of at most `batch` rows. */
export function deleteLinkClicksBetween(
  pool: pg.Pool,
  from: string,
  to: string,
  batch: number,
): Promise<BatchedDelete> {
  return deleteInBatches(
    pool,
    raw('email_link_clicks'),
    sql`email_id >= ${from}::uuid AND email_id < ${to}::uuid`,
    batch,
  );
}
