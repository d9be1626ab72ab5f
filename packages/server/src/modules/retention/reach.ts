import { RETENTION_DEFAULTS } from '@pigeon/contract';
import { queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

/** The oldest time a project's event lists reach (its event retention before now). */
export async function eventsRetainedSince(db: Queryable, projectId: string): Promise<string> {
  const [row] = await queryRows<{ days: number }>(
    db,
    sql`SELECT retention_events_days AS days FROM projects WHERE id = ${projectId}::uuid`,
  );
  const days = row?.days ?? RETENTION_DEFAULTS.eventsDays;
  return new Date(Date.now() - days * 86_400_000).toISOString();
}

/** A page of events or activity with how far back such lists reach (`retainedSince`). */
export async function withReach<T extends object>(
  db: Queryable,
  projectId: string,
  page: Promise<T>,
): Promise<T & { retainedSince: string }> {
  const [body, retainedSince] = await Promise.all([page, eventsRetainedSince(db, projectId)]);
  return { ...body, retainedSince };
}

/**
 * SQL true when content retention has emptied the email aliased `alias`: retention clears the
 * content oldest first and records in `retention_progress` the id below which a project is done
 * (never past a message in flight), so the email's id against that mark says it without a column.
 */
export const contentClearedSql = (alias: string): Sql =>
  sql`EXISTS (SELECT 1 FROM retention_progress rp
              WHERE rp.project_id = ${raw(alias)}.project_id AND ${raw(alias)}.id < rp.content_cleared_before)`;
