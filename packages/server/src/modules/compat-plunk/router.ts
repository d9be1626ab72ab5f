import { plunkContract } from '@pigeon/contract/compat';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import * as plunk from './service.js';

const s = initServer();

/** Plunk's v1 contact routes: each one call over the native contacts service, in Plunk's shapes. */
export const createPlunkRouter = (deps: AppDeps) => {
  const db = deps.db.pool;
  return s.router(plunkContract, {
    count: async ({ req }) => ({
      status: 200,
      body: { count: await plunk.countPlunkContacts(db, callerProject(req).id) },
    }),
    get: async ({ req, params }) => ({
      status: 200,
      body: await plunk.getPlunkContact(db, callerProject(req).id, params.id),
    }),
    list: async ({ req }) => ({ status: 200, body: await plunk.listPlunkContacts(db, callerProject(req).id) }),
    create: async ({ req, body }) => ({
      status: 200,
      body: { success: true, ...(await plunk.createPlunkContact(db, callerProject(req).id, body)) },
    }),
    update: async ({ req, body }) => ({
      status: 200,
      body: { success: true, ...(await plunk.updatePlunkContact(db, callerProject(req).id, body)) },
    }),
    delete: async ({ req, body }) => ({
      status: 200,
      body: { success: true, ...(await plunk.deletePlunkContact(db, callerProject(req).id, body.id)) },
    }),
    subscribe: async ({ req, body }) => ({
      status: 200,
      body: {
        success: true,
        contact: await plunk.setPlunkSubscription(db, callerProject(req).id, body, true),
        subscribed: true,
      },
    }),
    unsubscribe: async ({ req, body }) => ({
      status: 200,
      body: {
        success: true,
        contact: await plunk.setPlunkSubscription(db, callerProject(req).id, body, false),
        subscribed: false,
      },
    }),
  });
};
