import { RETENTION_DEFAULTS } from '@pigeon/contract';
import { queryRows, sql } from '../../db/query.js';
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
