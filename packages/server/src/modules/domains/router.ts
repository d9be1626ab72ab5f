import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { getDomain, setWarmup } from './detail.js';
import { createDomain, deleteDomain, listDomains, verifyDomain } from './service.js';

const s = initServer();

export const createDomainsRouter = (deps: AppDeps) =>
  s.router(contract.domains, {
    create: async ({ req, body }) => ({
      status: 201,
      body: await createDomain(deps, callerProject(req).id, body.domain),
    }),
    list: async ({ req, params }) => ({
      status: 200,
      body: await listDomains(deps, callerProject(req).id, params.projectId),
    }),
    get: async ({ req, params }) => ({
      status: 200,
      body: await getDomain(deps, callerProject(req).id, params.id),
    }),
    setWarmup: async ({ req, params, body }) => ({
      status: 200,
      body: await setWarmup(deps, callerProject(req).id, { id: params.id, settings: body }),
    }),
    verify: async ({ req, params }) => ({
      status: 200,
      body: await verifyDomain(deps, callerProject(req).id, params.id),
    }),
    delete: async ({ req, params }) => {
      await deleteDomain(deps.db.pool, callerProject(req).id, params.id);
      return { status: 204, body: undefined };
    },
  });
