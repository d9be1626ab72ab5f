import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerAccess } from '../../kit/caller.js';
import * as billing from './service.js';

const s = initServer();

/** The project of `:id`: the secret key's own, or one the signed-in user belongs to (checked by authenticate). */
const projectOf = (req: Parameters<typeof callerAccess>[0]) => callerAccess(req).project;

export const createBillingRouter = (deps: AppDeps) =>
  s.router(contract.billing, {
    getLimits: async ({ req }) => ({
      status: 200,
      body: await billing.readLimits(deps, projectOf(req)),
    }),
    setLimits: async ({ req, body }) => ({
      status: 200,
      body: await billing.changeLimits(deps, projectOf(req), body),
    }),
    consumption: async ({ req }) => ({
      status: 200,
      body: await billing.readConsumption(deps, projectOf(req)),
    }),
    checkout: async ({ req, body }) => ({
      status: 200,
      body: await billing.startCheckout(deps, projectOf(req), body),
    }),
    portal: async ({ req }) => ({
      status: 200,
      body: await billing.openPortal(deps, projectOf(req)),
    }),
    invoices: async ({ req }) => ({
      status: 200,
      body: await billing.readInvoices(deps, projectOf(req)),
    }),
  });
