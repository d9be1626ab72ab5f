import { RETENTION_DEFAULTS } from '@pigeon/contract';
import { queryRows, sql } from '../../db/query.js';
import type { AppDeps } from '../../deps.js';

/** The oldest time a project's event lists reach (its event retention before now). */
export async function eventsRetainedSince(deps: AppDeps, projectId: string): Promise<string> {
  const [row] = await queryRows<{ days: number }>(
    deps.db.pool,
    sql`SELECT retention_events_days AS days FROM projects WHERE id = ${projectId}::uuid`,
  );
  const days = row?.days ?? RETENTION_DEFAULTS.eventsDays;
  return new Date(deps.clock.nowMs() - days * deps.config.retention.dayMs).toISOString();
}

/** A page of events or activity with how far back such lists reach (`retainedSince`). */
export async function withReach<T extends object>(
  deps: AppDeps,
  projectId: string,
  page: Promise<T>,
): Promise<T & { retainedSince: string }> {
  const [body, retainedSince] = await Promise.all([page, eventsRetainedSince(deps, projectId)]);
  return { ...body, retainedSince };
}
