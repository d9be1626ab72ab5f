import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { type Caller, callerProject } from '../../kit/caller.js';
import { forbidden } from '../../kit/errors.js';
import { getDomain, setWarmup } from './detail.js';
import { createDomain, deleteDomain, listDomains, verifyDomain } from './service.js';

const s = initServer();

/** Domains are project settings: a session needs OWNER or ADMIN to change them; a secret key may. */
export function requireManager(req: { caller: Caller }) {
  if (req.caller.kind === 'session' && req.caller.role === 'MEMBER') {
    throw forbidden('Managing domains needs the OWNER or ADMIN role', 'INSUFFICIENT_ROLE');
  }
}

export const createDomainsRouter = (deps: AppDeps) =>
  s.router(contract.domains, {
    create: async ({ req, body }) => {
      requireManager(req);
      return { status: 201, body: await createDomain(deps, callerProject(req).id, body.domain) };
    },
    list: async ({ req, params }) => ({
      status: 200,
      body: await listDomains(deps, callerProject(req).id, params.projectId),
    }),
    get: async ({ req, params }) => ({
      status: 200,
      body: await getDomain(deps, callerProject(req).id, params.id),
    }),
    setWarmup: async ({ req, params, body }) => {
      requireManager(req);
      return {
        status: 200,
        body: await setWarmup(deps, callerProject(req).id, { id: params.id, settings: body }),
      };
    },
    verify: async ({ req, params }) => ({
      status: 200,
      body: await verifyDomain(deps, callerProject(req).id, params.id),
    }),
    delete: async ({ req, params }) => {
      requireManager(req);
      await deleteDomain(deps.db.pool, callerProject(req).id, params.id);
      return { status: 204, body: undefined };
    },
  });
