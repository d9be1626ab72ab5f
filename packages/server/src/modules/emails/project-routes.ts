import type { Queryable } from '../../db/sql.js';
import { type ProjectRoutes, readProjectRoutes } from '../../mail/relays.js';

/** A project's route change reaches the delivery loops within this. */
const FRESH_MS = 5000;

export interface ProjectRoutesCache {
  /** Reads the routes of the projects not read within FRESH_MS (one query for the batch, none with one relay). */
  load(projectIds: string[]): Promise<void>;
  get(projectId: string): ProjectRoutes | undefined;
}

/**
 * The projects' own relay routes as the delivery loops use them: read per claimed batch for the
 * projects not read lately, so a batch usually costs no query. With a single relay there is
 * nothing to choose and nothing is read.
 */
export function projectRoutesCache(db: Queryable, severalRelays: boolean): ProjectRoutesCache {
  const known = new Map<string, { routes: ProjectRoutes | undefined; at: number }>();
  return {
    async load(projectIds) {
      if (!severalRelays) return;
      const now = Date.now();
      const stale = [...new Set(projectIds)].filter((id) => (known.get(id)?.at ?? 0) < now - FRESH_MS);
      if (stale.length === 0) return;
      const read = await readProjectRoutes(db, stale);
      for (const id of stale) known.set(id, { routes: read.get(id), at: now });
    },
    get: (projectId) => known.get(projectId)?.routes,
  };
}
