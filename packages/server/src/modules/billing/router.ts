import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { Request } from 'express';
import type { AppDeps } from '../../deps.js';
import { callerUser } from '../../kit/caller.js';
import * as billing from './service.js';

const s = initServer();

/** A secret key's project, or the signed-in user (who must be a member: the service checks). */
const callerOf = (req: Request): billing.BillingCaller =>
  req.caller.kind === 'key' ? { keyProjectId: req.caller.project.id } : { userId: callerUser(req).id };

export const createBillingRouter = (deps: AppDeps) =>
  s.router(contract.billing, {
    getLimits: async ({ req, params }) => ({
      status: 200,
      body: await billing.readLimits(deps, callerOf(req), params.id),
    }),
    setLimits: async ({ req, params, body }) => ({
      status: 200,
      body: await billing.changeLimits(deps, callerOf(req), params.id, body),
    }),
    consumption: async ({ req, params }) => ({
      status: 200,
      body: await billing.readConsumption(deps, callerOf(req), params.id),
    }),
    checkout: async ({ req, params, body }) => ({
      status: 200,
      body: await billing.startCheckout(deps, callerOf(req), params.id, body),
    }),
    portal: async ({ req, params }) => ({
      status: 200,
      body: await billing.openPortal(deps, callerOf(req), params.id),
    }),
    invoices: async ({ req, params }) => ({
      status: 200,
      body: await billing.readInvoices(deps, callerOf(req), params.id),
    }),
  });
