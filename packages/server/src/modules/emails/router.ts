import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { requeueFailedEmails, requeueMessage } from '../email-states/public.js';
import { idempotency } from '../idempotency/public.js';
import { sendBatch, sendEmail } from './send.js';

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
        body: { success: true, data: await sendEmail(deps, callerProject(req).id, body, req.body) },
      }),
    },
    sendBatch: {
      middleware: [idempotency(deps)],
      handler: async ({ req, body }) => ({
        status: 200,
        body: {
          success: true,
          data: await sendBatch(deps, callerProject(req).id, body.messages, rawMessages(req.body)),
        },
      }),
    },
  });

/** The messages as sent, before the schema dropped unknown fields (they are warned about). */
const rawMessages = (raw: unknown): unknown[] =>
  raw !== null && typeof raw === 'object' && Array.isArray((raw as { messages?: unknown }).messages)
    ? (raw as { messages: unknown[] }).messages
    : [];
