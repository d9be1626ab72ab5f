import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { getDelivery, listDeliveries, replayDelivery, sendTestEvent } from './deliveries.js';
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  rotateEndpointSecret,
  updateEndpoint,
} from './endpoints.js';
import { getRecovery, queueRecovery } from './recovery.js';

const s = initServer();

const projectOf = (req: Parameters<typeof callerProject>[0]) => callerProject(req).id;

export const createWebhookEndpointsRouter = (deps: AppDeps) =>
  s.router(contract.webhookEndpoints, {
    create: async ({ req, body }) => ({ status: 201, body: await createEndpoint(deps, projectOf(req), body) }),
    list: async ({ req }) => ({ status: 200, body: await listEndpoints(deps, projectOf(req)) }),
    get: async ({ req, params }) => ({ status: 200, body: await getEndpoint(deps, projectOf(req), params.id) }),
    update: async ({ req, params, body }) => ({
      status: 200,
      body: await updateEndpoint(deps, projectOf(req), params.id, body),
    }),
    delete: async ({ req, params }) => {
      await deleteEndpoint(deps, projectOf(req), params.id);
      return { status: 204, body: undefined };
    },
    rotateSecret: async ({ req, params, body }) => ({
      status: 200,
      body: await rotateEndpointSecret(deps, projectOf(req), params.id, body.overlapHours),
    }),
    test: async ({ req, params }) => ({ status: 202, body: await sendTestEvent(deps, projectOf(req), params.id) }),
    deliveries: async ({ req, params, query }) => ({
      status: 200,
      body: await listDeliveries(deps, projectOf(req), params.id, query),
    }),
    delivery: async ({ req, params }) => ({
      status: 200,
      body: await getDelivery(deps, projectOf(req), params.id, params.deliveryId),
    }),
    replay: async ({ req, params }) => ({
      status: 202,
      body: await replayDelivery(deps, projectOf(req), params.id, params.deliveryId),
    }),
    recover: async ({ req, params, body }) => ({
      status: 202,
      body: await queueRecovery(deps, projectOf(req), params.id, body),
    }),
    recovery: async ({ req, params }) => ({
      status: 200,
      body: await getRecovery(deps, projectOf(req), params.id, params.jobId),
    }),
  });
