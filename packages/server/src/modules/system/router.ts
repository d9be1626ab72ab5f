import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { checkHealth, deploymentConfig } from './service.js';

const s = initServer();

export const createSystemRouter = (deps: AppDeps) =>
  s.router(contract.system, {
    health: async () => {
      const body = await checkHealth(deps);
      return { status: body.status === 'ok' ? 200 : 503, body };
    },
    config: async () => ({ status: 200, body: deploymentConfig(deps) }),
  });
