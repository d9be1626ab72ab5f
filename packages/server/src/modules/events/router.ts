import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { Response } from 'express';
import type { AppDeps } from '../../deps.js';
import { type Caller, callerProject, settleKeyCheck } from '../../http/auth.js';
import { idempotency } from '../../http/idempotency.js';
import { backgroundJob } from '../background-jobs/registry.js';
import { getJob, insertJob } from '../background-jobs/repository.js';
import { eventNames, eventStats, eventUsage, listContactEvents, listEvents } from './queries.js';
import { type TrackInput, trackEvent, trackWithKey } from './track.js';

const s = initServer();

export const createEventsRouter = (deps: AppDeps) => {
  const db = deps.db.pool;
  const track = {
    middleware: [idempotency(deps)],
    handler: async ({ req, res, body }: { req: { caller: Caller }; res: Response; body: TrackInput }) => {
      const { caller } = req;
      let data: Awaited<ReturnType<typeof trackEvent>> | undefined;
      if (caller.kind === 'deferred-key') {
        const tracked = await trackWithKey(db, caller, deps.config.rateLimitPerMinute, body);
        settleKeyCheck(deps, res, tracked.check);
        data = tracked.result;
      } else {
        data = await trackEvent(db, callerProject(req).id, body);
      }
      if (!data) throw new Error('track stored no event');
      return { status: 200 as const, body: { success: true as const, data } };
    },
  };
  return s.router(contract.events, {
    track,
    trackFromDashboard: track,
    list: async ({ req, query }) => ({ status: 200, body: await listEvents(db, callerProject(req).id, query) }),
    stats: async ({ req, query }) => ({ status: 200, body: await eventStats(db, callerProject(req).id, query) }),
    names: async ({ req }) => ({ status: 200, body: await eventNames(db, callerProject(req).id) }),
    byContact: async ({ req, params, query }) => ({
      status: 200,
      body: await listContactEvents(db, callerProject(req).id, params.contactId, query),
    }),
    jobStatus: async ({ req, params }) => ({
      status: 200,
      body: await getJob(db, callerProject(req).id, params.jobId, ['delete_events']),
    }),
    usage: async ({ req, params }) => ({
      status: 200,
      body: await eventUsage(db, callerProject(req).id, params.eventName),
    }),
    deleteByName: async ({ req, params }) => {
      const jobId = await insertJob(db, callerProject(req).id, 'delete_events', { name: params.eventName });
      await deps.scheduler.enqueue(backgroundJob, { jobId });
      return { status: 202, body: { jobId } };
    },
  });
};
