import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { Request, Response } from 'express';
import type { AppDeps } from '../../deps.js';
import { callerProject, settleKeyCheck } from '../../http/auth.js';
import { idempotencyKeyOf, reusedKeyError } from '../../http/idempotency.js';
import { queueJob } from '../background-jobs/queue.js';
import { getJob } from '../background-jobs/service.js';
import { withReach } from '../retention/reach.js';
import { eventNames, eventStats, eventUsage, listContactEvents, listEvents } from './service.js';
import { keyCheckOf, type TrackInput, toTrackRow, trackResult } from './track.js';
import { TrackBatcher } from './track-batcher.js';
import type { TrackOwner } from './track-statement.js';

const s = initServer();

export const createEventsRouter = (deps: AppDeps) => {
  const db = deps.db.pool;
  const batcher = new TrackBatcher(db, {
    rateLimitPerMinute: deps.config.rateLimitPerMinute,
    idempotencyTtlMinutes: deps.config.track.idempotencyTtlMinutes,
    maxRows: deps.config.track.batchMaxRows,
    maxStatements: deps.config.track.batchStatements,
  });
  // The key check, rate-limit count and Idempotency-Key claim happen in the track statement itself.
  const track = async ({ req, res, body }: { req: Request; res: Response; body: TrackInput }) => {
    const { caller } = req;
    const key = idempotencyKeyOf(req);
    const owner: TrackOwner =
      caller.kind === 'deferred-key'
        ? { by: caller.keyType, keyHash: caller.keyHash }
        : { by: 'project', projectId: callerProject(req).id };
    const outcome = await batcher.track(owner, toTrackRow(body, key));
    settleKeyCheck(deps, res, keyCheckOf(outcome));
    if (!outcome.tracked) {
      if (key !== null && outcome.projectId) throw await reusedKeyError(db, outcome.projectId, key, 'POST /v1/track');
      throw new Error('track stored no event');
    }
    return { status: 200 as const, body: { success: true as const, data: trackResult(outcome.tracked) } };
  };
  return s.router(contract.events, {
    track,
    trackFromDashboard: track,
    list: async ({ req, query }) => ({
      status: 200,
      body: await withReach(db, callerProject(req).id, listEvents(db, callerProject(req).id, query)),
    }),
    stats: async ({ req, query }) => ({ status: 200, body: await eventStats(db, callerProject(req).id, query) }),
    names: async ({ req }) => ({ status: 200, body: await eventNames(db, callerProject(req).id) }),
    byContact: async ({ req, params, query }) => ({
      status: 200,
      body: await withReach(
        db,
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
