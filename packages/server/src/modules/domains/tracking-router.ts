import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import {
  createTrackingDomain,
  deleteTrackingDomain,
  getTrackingDomain,
  listTrackingDomains,
  verifyTrackingDomain,
} from './tracking-domains.js';

const s = initServer();

export const createTrackingDomainsRouter = (deps: AppDeps) =>
  s.router(contract.trackingDomains, {
    create: async ({ req, body }) => ({
      status: 201,
      body: await createTrackingDomain(deps, callerProject(req).id, body),
    }),
    list: async ({ req }) => ({ status: 200, body: await listTrackingDomains(deps, callerProject(req).id) }),
    get: async ({ req, params }) => ({
      status: 200,
      body: await getTrackingDomain(deps, callerProject(req).id, params.id),
    }),
    verify: async ({ req, params }) => ({
      status: 200,
      body: await verifyTrackingDomain(deps, callerProject(req).id, params.id),
    }),
    delete: async ({ req, params }) => {
      await deleteTrackingDomain(deps, callerProject(req).id, params.id);
      return { status: 204, body: undefined };
    },
  });
