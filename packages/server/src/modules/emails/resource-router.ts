import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { cancelEmail, getEmail, listEmails, requeueEmail } from './resource.js';

const s = initServer();

export const createEmailResourceRouter = (deps: AppDeps) =>
  s.router(contract.sentEmails, {
    get: async ({ req, params }) => ({
      status: 200,
      body: await getEmail(deps.db.pool, callerProject(req).id, params.id),
    }),
    list: async ({ req, query }) => ({
      status: 200,
      body: await listEmails(deps.db.pool, callerProject(req).id, query),
    }),
    cancel: async ({ req, params }) => ({
      status: 200,
      body: await cancelEmail(deps.db.pool, callerProject(req).id, params.id),
    }),
    requeue: async ({ req, params }) => ({
      status: 200,
      body: await requeueEmail(deps.db.pool, callerProject(req).id, params.id),
    }),
  });
