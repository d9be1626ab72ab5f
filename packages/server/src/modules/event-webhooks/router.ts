import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { type Caller, callerProject } from '../../kit/caller.js';
import { forbidden } from '../../kit/errors.js';
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

/** Endpoints carry their signing secrets: a session needs OWNER or ADMIN, like the secret key; a secret key may. */
function managedProject(req: { caller: Caller }): string {
  if (req.caller.kind === 'session' && req.caller.role === 'MEMBER') {
    throw forbidden('Webhook endpoints need the OWNER or ADMIN role', 'INSUFFICIENT_ROLE');
  }
  return callerProject(req).id;
}

export const createWebhookEndpointsRouter = (deps: AppDeps) =>
  s.router(contract.webhookEndpoints, {
    create: async ({ req, body }) => ({ status: 201, body: await createEndpoint(deps, managedProject(req), body) }),
    list: async ({ req }) => ({ status: 200, body: await listEndpoints(deps, managedProject(req)) }),
    get: async ({ req, params }) => ({ status: 200, body: await getEndpoint(deps, managedProject(req), params.id) }),
    update: async ({ req, params, body }) => ({
      status: 200,
      body: await updateEndpoint(deps, managedProject(req), params.id, body),
    }),
    delete: async ({ req, params }) => {
      await deleteEndpoint(deps, managedProject(req), params.id);
      return { status: 204, body: undefined };
    },
    rotateSecret: async ({ req, params, body }) => ({
      status: 200,
      body: await rotateEndpointSecret(deps, managedProject(req), params.id, body.overlapHours),
    }),
    test: async ({ req, params }) => ({ status: 202, body: await sendTestEvent(deps, managedProject(req), params.id) }),
    deliveries: async ({ req, params, query }) => ({
      status: 200,
      body: await listDeliveries(deps, managedProject(req), params.id, query),
    }),
    delivery: async ({ req, params }) => ({
      status: 200,
      body: await getDelivery(deps, managedProject(req), params.id, params.deliveryId),
    }),
    replay: async ({ req, params }) => ({
      status: 202,
      body: await replayDelivery(deps, managedProject(req), params.id, params.deliveryId),
    }),
    recover: async ({ req, params, body }) => ({
      status: 202,
      body: await queueRecovery(deps, managedProject(req), params.id, body),
    }),
    recovery: async ({ req, params }) => ({
      status: 200,
      body: await getRecovery(deps, managedProject(req), params.id, params.jobId),
    }),
  });
