import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { domainDmarc } from './alignment.js';

const s = initServer();

export const createDmarcReportsRouter = (deps: AppDeps) =>
  s.router(contract.dmarcReports, {
    get: async ({ req, params, query }) => ({
      status: 200,
      body: await domainDmarc(deps, callerProject(req).id, { id: params.id, ...query }),
    }),
  });
