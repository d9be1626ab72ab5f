import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { checkSender } from './service.js';

const s = initServer();

export const createSenderCheckRouter = (deps: AppDeps) =>
  s.router(contract.senderCheck, {
    check: async ({ req, params }) => ({
      status: 200,
      body: await checkSender(deps, callerProject(req).id, params.id),
    }),
  });
