import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { receiveStripeEvent } from '../billing/public.js';
import { receiveSnsMessage } from '../ses-feedback/public.js';

const s = initServer();

/** Inbound webhooks from infrastructure: their bodies are verified as received (`req.rawBody`). */
export const createInboundWebhooksRouter = (deps: AppDeps) =>
  s.router(contract.inboundWebhooks, {
    stripe: async ({ req }) => ({
      status: 200,
      body: await receiveStripeEvent(deps, req.rawBody, req.header('stripe-signature')),
    }),
    sns: async ({ body }) => ({ status: 200, body: await receiveSnsMessage(deps, body) }),
  });
