import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../http/auth.js';
import { idempotency } from '../../http/idempotency.js';
import { requeueFailedEmails, requeueMessage } from './requeue.js';
import { sendEmail } from './send.js';

const s = initServer();

export const createEmailsRouter = (deps: AppDeps) =>
  s.router(contract.emails, {
    requeueFailed: async ({ req }) => {
      const data = await requeueFailedEmails(deps.db.pool, callerProject(req).id);
      return { status: 200, body: { success: true, data, message: requeueMessage(data) } };
    },
    send: {
      middleware: [idempotency(deps)],
      handler: async ({ req, body }) => ({
        status: 200,
        body: { success: true, data: await sendEmail(deps, callerProject(req).id, body) },
      }),
    },
  });
