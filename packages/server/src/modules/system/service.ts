import type { AppDeps } from '../../deps.js';
import { VERSION } from '../../version.js';

export async function checkHealth(deps: AppDeps) {
  const database = await deps.db.orm.em
    .getConnection()
    .execute('SELECT 1')
    .then(() => 'up' as const)
    .catch(() => 'down' as const);
  return {
    status: database === 'up' ? ('ok' as const) : ('degraded' as const),
    database,
    version: VERSION,
    uptimeSeconds: Math.round((Date.now() - deps.startedAt.getTime()) / 1000),
  };
}
