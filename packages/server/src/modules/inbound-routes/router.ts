import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import { type Request, type Response, Router } from 'express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { readAttachment } from './attachments.js';
import { getInboundEmail, listInboundEmails } from './emails.js';
import { createRoute, deleteRoute, getRoute, listRoutes, updateRoute } from './routes.js';

const s = initServer();

export const createInboundRoutesRouter = (deps: AppDeps) =>
  s.router(contract.inboundRoutes, {
    create: async ({ req, body }) => ({ status: 201, body: await createRoute(deps, callerProject(req).id, body) }),
    list: async ({ req }) => ({ status: 200, body: await listRoutes(deps, callerProject(req).id) }),
    get: async ({ req, params }) => ({ status: 200, body: await getRoute(deps, callerProject(req).id, params.id) }),
    update: async ({ req, params, body }) => ({
      status: 200,
      body: await updateRoute(deps, callerProject(req).id, params.id, body),
    }),
    delete: async ({ req, params }) => {
      await deleteRoute(deps, callerProject(req).id, params.id);
      return { status: 204, body: undefined };
    },
    listEmails: async ({ req, query }) => ({
      status: 200,
      body: await listInboundEmails(deps, callerProject(req).id, query),
    }),
    getEmail: async ({ req, params }) => ({
      status: 200,
      body: await getInboundEmail(deps, callerProject(req).id, params.id),
    }),
  });

/**
 * Attachments of received mail behind their signed, expiring links (the `url` of each attachment
 * in `email.received` and `GET /inbound-emails/:id`): a file download, like uploaded images, so it
 * sits beside the API rather than in it. Always a download, never rendered by the browser.
 */
export function inboundAttachmentsRouter(deps: AppDeps): Router {
  const router = Router();
  router.get('/inbound/attachments/:token', async (req: Request, res: Response, next) => {
    try {
      const file = await readAttachment(deps, String(req.params.token));
      if (!file) return next();
      const name = (file.filename ?? 'attachment').replace(/[^\w.() -]/g, '_');
      res.set({
        'Content-Type': file.contentType,
        'Content-Disposition': `attachment; filename="${name}"`,
        'Cache-Control': 'private, no-store',
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': "default-src 'none'; sandbox",
      });
      res.status(200).send(file.content);
    } catch (err) {
      next(err);
    }
  });
  return router;
}
