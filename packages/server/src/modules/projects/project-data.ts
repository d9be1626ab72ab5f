import type { EntityManager } from '@mikro-orm/postgresql';

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
  'idempotency_keys',
  'background_jobs',
  'uploads',
  'event_counts',
  'events',
  'contacts',
];

/** Wipes the project's data in one transaction; returns rows deleted per table. */
export async function wipeProjectData(em: EntityManager, projectId: string): Promise<Record<string, number>> {
  return em.transactional(async (tx) => {
    const deleted: Record<string, number> = {};
    for (const table of PROJECT_DATA_TABLES) {
      const result = await tx.getConnection().execute(`DELETE FROM ${table} WHERE project_id = ?`, [projectId], 'run');
      deleted[table] = (result as { affectedRows?: number }).affectedRows ?? 0;
    }
    return deleted;
  });
}
