import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { liftSuppression, listSuppressions } from './suppressions.js';

const s = initServer();

export const createSuppressionsRouter = (deps: AppDeps) =>
  s.router(contract.suppressions, {
    list: async ({ req, query }) => ({
      status: 200,
      body: await listSuppressions(deps.db.pool, callerProject(req).id, query),
    }),
    delete: async ({ req, params }) => {
      await liftSuppression(deps.db.pool, callerProject(req).id, params.id);
      return { status: 204, body: undefined };
    },
  });
