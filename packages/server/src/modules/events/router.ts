import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { Request, Response } from 'express';
import type { AppDeps } from '../../deps.js';
import { callerProject, type KeyCheck } from '../../kit/caller.js';
import { getJob, queueJob } from '../background-jobs/public.js';
import { withReach } from '../event-log/public.js';
import { idempotencyKeyOf } from '../idempotency/public.js';
import { settleKeyCheck } from '../projects/public.js';
import { eventNames, eventStats, eventUsage, listContactEvents, listEvents } from './service.js';
import type { TrackEvent, TrackInput } from './track.js';
import type { TrackOwner } from './track-statement.js';

const s = initServer();

export const createEventsRouter = (deps: AppDeps, trackEvent: TrackEvent) => {
  const db = deps.db.pool;
  // The key check, rate-limit count and Idempotency-Key claim happen in the track statement itself.
  // Keyed tracks of POST /v1/track are answered before express, the same way (track-route.ts).
  const track = async ({ req, res, body }: { req: Request; res: Response; body: TrackInput }) => {
    const { caller } = req;
    const owner: TrackOwner =
      caller.kind === 'deferred-key'
        ? { by: caller.keyType, keyHash: caller.keyHash }
        : { by: 'project', projectId: callerProject(req).id };
    const key = caller.kind === 'deferred-key' ? caller : undefined;
    const settle = (check: KeyCheck) => settleKeyCheck(deps, res, check, key);
    const data = await trackEvent(owner, body, idempotencyKeyOf(req), settle);
    return { status: 200 as const, body: { success: true as const, data } };
  };
  return s.router(contract.events, {
    track,
    trackFromDashboard: track,
    list: async ({ req, query }) => ({
      status: 200,
      body: await withReach(deps, callerProject(req).id, listEvents(db, callerProject(req).id, query)),
    }),
    stats: async ({ req, query }) => ({
      status: 200,
      body: await eventStats(deps.db.reads, callerProject(req).id, query, deps.clock.now()),
    }),
    names: async ({ req }) => ({ status: 200, body: await eventNames(db, callerProject(req).id) }),
    byContact: async ({ req, params, query }) => ({
      status: 200,
      body: await withReach(
        deps,
        callerProject(req).id,
        listContactEvents(db, callerProject(req).id, params.contactId, query),
      ),
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
      const jobId = await queueJob(deps, callerProject(req).id, 'delete_events', { name: params.eventName });
      return { status: 202, body: { jobId } };
    },
  });
};
