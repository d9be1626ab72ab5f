import { initContract } from '@ts-rest/core';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import type { Express } from 'express';
import { z } from 'zod';
import type { AppDeps } from '../src/deps.js';
import { contractMiddleware } from '../src/http/contract-middleware.js';
import { callerProject } from '../src/kit/caller.js';
import { requestValidationErrorHandler } from '../src/kit/validation.js';

const c = initContract();
const Answer = z.object({ projectId: z.string(), via: z.string() });
const Empty = z.object({}).strict().optional();
const get = (auth: 'secret' | 'dashboard') => ({
  method: 'GET' as const,
  path: `/__probe/${auth}`,
  metadata: { auth },
  responses: { 200: Answer },
});
const post = (auth: 'secret' | 'track' | 'dashboard') => ({
  method: 'POST' as const,
  path: `/__probe/${auth}`,
  metadata: { auth },
  body: Empty,
  responses: { 200: Answer },
});

/** Routes behind the real authentication middleware, one per kind of key rule. */
export const probeContract = c.router({
  secretGet: get('secret'),
  secretPost: post('secret'),
  track: post('track'),
  dashboardGet: get('dashboard'),
  dashboardPost: post('dashboard'),
});

export function mountProbe(app: Express, deps: AppDeps) {
  const s = initServer();
  const answer = async ({ req }: { req: Parameters<typeof callerProject>[0] }) => ({
    status: 200 as const,
    body: { projectId: callerProject(req).id, via: req.caller.kind },
  });
  createExpressEndpoints(
    probeContract,
    s.router(probeContract, {
      secretGet: answer,
      secretPost: answer,
      track: answer,
      dashboardGet: answer,
      dashboardPost: answer,
    }),
    app,
    { globalMiddleware: contractMiddleware(deps), requestValidationErrorHandler },
  );
}
