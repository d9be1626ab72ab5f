import { runStatement, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

/**
 * The write retention makes on DMARC reports (modules/retention decides what is old): a report
 * and its records go with the project's events, by the time the report began. At most `batch`
 * reports a statement (their records follow by cascade).
 */
export function deleteExpiredDmarcReports(
  db: Queryable,
  projectId: string,
  before: Date,
  batch: number,
): Promise<number> {
  return runStatement(
    db,
    sql`DELETE FROM dmarc_reports WHERE id IN (SELECT id FROM dmarc_reports
          WHERE project_id = ${projectId}::uuid AND begin_at < ${before} LIMIT ${batch})`,
  );
}
