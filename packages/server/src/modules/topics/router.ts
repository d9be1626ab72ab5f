import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import * as topics from './service.js';

const s = initServer();

export const createTopicsRouter = (deps: AppDeps) => {
  const db = deps.db.pool;
  return s.router(contract.topics, {
    create: async ({ req, body }) => ({ status: 201, body: await topics.createTopic(db, callerProject(req).id, body) }),
    list: async ({ req }) => ({ status: 200, body: await topics.listTopics(db, callerProject(req).id) }),
    get: async ({ req, params }) => ({
      status: 200,
      body: await topics.getTopic(db, callerProject(req).id, params.id),
    }),
    update: async ({ req, params, body }) => ({
      status: 200,
      body: await topics.updateTopic(db, callerProject(req).id, params.id, body),
    }),
    delete: async ({ req, params }) => {
      await topics.deleteTopic(db, callerProject(req).id, params.id);
      return { status: 204, body: undefined };
    },
    contactTopics: async ({ req, params }) => ({
      status: 200,
      body: await topics.getContactTopics(db, callerProject(req).id, params.id),
    }),
    setContactTopics: async ({ req, params, body }) => ({
      status: 200,
      body: await topics.setContactTopics(db, callerProject(req).id, params.id, body),
    }),
  });
};
