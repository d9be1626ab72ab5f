import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { VERSION } from '../../version.js';
import { checkHealth, checkReadiness, deploymentConfig } from './service.js';

const s = initServer();

export const createSystemRouter = (deps: AppDeps) =>
  s.router(contract.system, {
    health: async () => {
      const body = await checkHealth(deps);
      return { status: body.status === 'ok' ? 200 : 503, body };
    },
    ready: async () => {
      const { ready, reasons } = await checkReadiness(deps.db.pool, deps.config);
      return {
        status: ready ? 200 : 503,
        body: { status: ready ? ('ready' as const) : ('not_ready' as const), reasons, version: VERSION },
      };
    },
    config: async () => ({ status: 200, body: deploymentConfig(deps) }),
  });
