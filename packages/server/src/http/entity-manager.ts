import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppDeps } from '../deps.js';

declare global {
  namespace Express {
    interface Request {
      em?: EntityManager;
    }
  }
}

/**
 * The request's own entity manager, forked on first use. Only handlers that use the ORM pay for
 * it: no AsyncLocalStorage context is opened for every request (it costs on hot paths).
 */
export function requestEm(deps: AppDeps, req: { em?: EntityManager }): EntityManager {
  req.em ??= deps.db.orm.em.fork();
  return req.em;
}
