import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../http/auth.js';
import { idempotency } from '../../http/idempotency.js';
import { sendEmail } from './send.js';

const s = initServer();

export const createEmailsRouter = (deps: AppDeps) =>
  s.router(contract.emails, {
    send: {
      middleware: [idempotency(deps)],
      handler: async ({ req, body }) => ({
        status: 200,
        body: { success: true, data: await sendEmail(deps, callerProject(req).id, body) },
      }),
    },
  });
