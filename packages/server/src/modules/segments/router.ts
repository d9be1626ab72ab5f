import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { addMembers, removeMembers } from './members.js';
import * as segments from './service.js';

const s = initServer();

export const createSegmentsRouter = (deps: AppDeps) => {
  const db = deps.db.pool;
  const opts = deps.config.segments;
  return s.router(contract.segments, {
    create: async ({ req, body }) => ({
      status: 201,
      body: await segments.createSegment(db, callerProject(req).id, body, opts),
    }),
    list: async ({ req }) => ({ status: 200, body: await segments.listSegments(db, callerProject(req).id) }),
    get: async ({ req, params }) => ({
      status: 200,
      body: await segments.getSegment(db, callerProject(req).id, params.id),
    }),
    update: async ({ req, params, body }) => ({
      status: 200,
      body: await segments.updateSegment(db, callerProject(req).id, params.id, body, opts),
    }),
    delete: async ({ req, params }) => {
      await segments.deleteSegment(db, callerProject(req).id, params.id);
      return { status: 204, body: undefined };
    },
    usage: async ({ req, params }) => ({
      status: 200,
      body: await segments.segmentUsage(db, callerProject(req).id, params.id),
    }),
    count: async ({ req, body }) => ({
      status: 200,
      body: await segments.countCondition(db, callerProject(req).id, body.condition, opts),
    }),
    contacts: async ({ req, params, query }) => ({
      status: 200,
      body: await segments.segmentContacts(db, callerProject(req).id, params.id, query, opts),
    }),
    addMembers: async ({ req, params, body }) => ({
      status: 200,
      body: await addMembers(db, callerProject(req).id, params.id, body),
    }),
    removeMembers: async ({ req, params, body }) => ({
      status: 200,
      body: await removeMembers(db, callerProject(req).id, params.id, body),
    }),
    compute: async ({ req, params }) => ({
      status: 200,
      body: await segments.computeSegment(db, callerProject(req).id, params.id, opts),
    }),
    refresh: async ({ req, params }) => ({
      status: 200,
      body: await segments.refreshSegment(db, callerProject(req).id, params.id, opts),
    }),
  });
};
