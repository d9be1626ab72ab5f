import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { billingProject, consumption, getLimits, managers, setLimits } from './service.js';
import { createCheckout, createPortal, listInvoices, stripeConfigOf } from './stripe.js';

const s = initServer();

export const createBillingRouter = (deps: AppDeps) =>
  s.router(contract.billing, {
    getLimits: async ({ req, params }) => ({
      status: 200,
      body: await getLimits(deps.db.pool, await billingProject(deps, req, params.id)),
    }),
    setLimits: async ({ req, params, body }) => ({
      status: 200,
      body: await setLimits(deps.db.pool, await billingProject(deps, req, params.id, managers), body),
    }),
    consumption: async ({ req, params }) => ({
      status: 200,
      body: await consumption(deps, await billingProject(deps, req, params.id)),
    }),
    checkout: async ({ req, params, body }) => {
      stripeConfigOf(deps); // 404 BILLING_DISABLED before anything else when billing is off
      return {
        status: 200,
        body: await createCheckout(deps, await billingProject(deps, req, params.id, managers), body),
      };
    },
    portal: async ({ req, params }) => {
      stripeConfigOf(deps);
      return { status: 200, body: await createPortal(deps, await billingProject(deps, req, params.id, managers)) };
    },
    invoices: async ({ req, params }) => {
      stripeConfigOf(deps);
      return { status: 200, body: await listInvoices(deps, await billingProject(deps, req, params.id, managers)) };
    },
  });
