import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { campaignStatsSummary, timeseries, topCampaigns, topEvents } from './service.js';

const s = initServer();

export const createAnalyticsRouter = (deps: AppDeps) => {
  // The rollup is seconds behind already: these reads may run on a replica (DATABASE_REPLICA_URL).
  const db = deps.db.reads;
  return s.router(contract.analytics, {
    timeseries: async ({ req, query }) => ({
      status: 200,
      body: await timeseries(db, callerProject(req).id, query, deps.clock.now()),
    }),
    topCampaigns: async ({ req, query }) => ({
      status: 200,
      body: await topCampaigns(db, callerProject(req).id, query, deps.clock.now()),
    }),
    campaignStats: async ({ req, query }) => ({
      status: 200,
      body: await campaignStatsSummary(db, callerProject(req).id, query, deps.clock.now()),
    }),
    topEvents: async ({ req, query }) => ({
      status: 200,
      body: await topEvents(db, callerProject(req).id, query, deps.clock.now()),
    }),
  });
};
