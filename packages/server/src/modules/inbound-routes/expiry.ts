import { runStatement, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

/**
 * The writes retention makes on `inbound_emails` (modules/retention decides what is old): the
 * content (text, HTML, headers, the raw message its attachments are read from) goes with the
 * project's content retention, the row with its events' retention. At most `batch` rows a statement.
 */
export function clearInboundContent(db: Queryable, projectId: string, before: string, batch: number): Promise<number> {
  return runStatement(
    db,
    sql`UPDATE inbound_emails SET text = NULL, html = NULL, headers = '[]', raw = NULL
        WHERE id IN (SELECT id FROM inbound_emails
                     WHERE project_id = ${projectId}::uuid AND id < ${before}::uuid AND raw IS NOT NULL LIMIT ${batch})`,
  );
}

export function deleteExpiredInbound(db: Queryable, projectId: string, before: string, batch: number): Promise<number> {
  return runStatement(
    db,
    sql`DELETE FROM inbound_emails WHERE id IN (SELECT id FROM inbound_emails
          WHERE project_id = ${projectId}::uuid AND id < ${before}::uuid LIMIT ${batch})`,
  );
}
