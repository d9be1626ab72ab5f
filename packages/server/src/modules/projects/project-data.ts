import type pg from 'pg';
import { raw, sql, toQuery } from '../../db/query.js';
import { inTransaction } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import type { ProjectRef } from '../../kit/caller.js';
import { refuseIfDisabled } from './service.js';

/**
 * Tables holding a project's data (not its settings, members or keys), in delete order.
 * Each module that stores project data adds its tables here; `reset` wipes exactly these.
 */
export const PROJECT_DATA_TABLES: string[] = [
  'suppressions',
  'emails',
  'workflows',
  'campaigns',
  'segments',
  'resource_refs',
  'templates',
  'contact_topics',
  'topics',
  'idempotency_keys',
  'background_jobs',
  'uploads',
  'event_counts_daily',
  'event_counts',
  'events',
  'contacts',
];

/** Wipes the project's data in one transaction; returns rows deleted per table. */
export async function wipeProjectData(pool: pg.Pool, projectId: string): Promise<Record<string, number>> {
  return inTransaction(pool, async (client) => {
    const deleted: Record<string, number> = {};
    for (const table of PROJECT_DATA_TABLES) {
      const { text, values } = toQuery(sql`DELETE FROM ${raw(table)} WHERE project_id = ${projectId}`);
      deleted[table] = (await client.query(text, values)).rowCount ?? 0;
    }
    return deleted;
  });
}

/** Empties an enabled project of its data (POST /users/@me/projects/:id/reset). */
export async function resetProject(deps: AppDeps, project: ProjectRef) {
  refuseIfDisabled(project);
  return wipeProjectData(deps.db.pool, project.id);
}
