import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { withReach } from '../event-log/public.js';
import { activityStats, activityTypes, listActivity, recentActivityCount, upcomingActivity } from './service.js';

const s = initServer();

export const createActivityRouter = (deps: AppDeps) => {
  const db = deps.db.pool;
  return s.router(contract.activity, {
    list: async ({ req, query }) => ({
      status: 200,
      body: await withReach(deps, callerProject(req).id, listActivity(db, callerProject(req).id, query)),
    }),
    // Counted from the rollup, like /events/stats: may run on a replica (DATABASE_REPLICA_URL).
    stats: async ({ req, query }) => ({
      status: 200,
      body: await activityStats(deps.db.reads, callerProject(req).id, query, deps.clock.now()),
    }),
    types: async ({ req, query }) => ({
      status: 200,
      body: await activityTypes(deps.db.reads, callerProject(req).id, query, deps.clock.now()),
    }),
    recentCount: async ({ req, query }) => ({
      status: 200,
      body: await recentActivityCount(deps, callerProject(req).id, query),
    }),
    upcoming: async ({ req, query }) => ({
      status: 200,
      body: { data: await upcomingActivity(db, callerProject(req).id, query.limit) },
    }),
  });
};
