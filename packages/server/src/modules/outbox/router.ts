import { type Request, type Response, Router } from 'express';
import { isUuid } from '../../db/scoped.js';
import type { AppDeps } from '../../deps.js';
import type { SessionUser } from '../../kit/caller.js';
import { AppError } from '../../kit/errors.js';
import { sendPage } from '../../kit/pages.js';
import { requireSessionUser } from '../accounts/public.js';
import './pages.js';
import {
  findOutboxMessage,
  htmlWithoutOpenPixel,
  listOutboxMessages,
  readOutboxFile,
  readOutboxHeaders,
} from './service.js';

/**
 * The outbox viewer: what the local outbox transport delivered, for members of the sending
 * project only. `main` mounts it only when the outbox is the transport.
 */
export function outboxRouter(deps: AppDeps): Router {
  const router = Router();
  const outboxDir = deps.config.mail.outboxDir;

  /** Signed-in members only; anyone else is sent to the sign-in page and back. */
  const signedIn =
    (handler: (req: Request, res: Response, user: SessionUser) => Promise<void>) =>
    async (req: Request, res: Response) => {
      let user: SessionUser;
      try {
        user = await requireSessionUser(deps, req);
      } catch (err) {
        if (err instanceof AppError && err.kind === 'unauthenticated')
          return res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
        throw err;
      }
      await handler(req, res, user);
    };

  router.get(
    '/outbox',
    signedIn(async (req, res, user) => {
      const before = typeof req.query.before === 'string' ? req.query.before : undefined;
      const page = await listOutboxMessages(deps.db.pool, user.id, before);
      sendPage(res, 200, 'outbox-list', {
        title: 'Outbox',
        wide: true,
        outboxDir,
        userEmail: user.email,
        messages: page.messages,
        nextPage: page.next ? `/outbox?before=${encodeURIComponent(page.next)}` : null,
      });
    }),
  );

  /** The message as a member sees it, or the not-found page (also for other projects' messages). */
  const withMessage = (
    handler: (res: Response, message: NonNullable<Awaited<ReturnType<typeof findOutboxMessage>>>) => Promise<void>,
  ) =>
    signedIn(async (req, res, user) => {
      const id = String(req.params.id);
      const message = isUuid(id) ? await findOutboxMessage(deps.db.pool, user.id, id) : undefined;
      if (!message) return sendPage(res, 404, 'outbox-missing', { title: 'Message not found' });
      await handler(res, message);
    });

  router.get(
    '/outbox/:id',
    withMessage(async (res, message) => {
      const headers = await readOutboxHeaders(deps, message);
      sendPage(res, 200, 'outbox-message', { title: message.subject, wide: true, message, headers });
    }),
  );

  router.get(
    '/outbox/:id/raw',
    withMessage(async (res, message) => {
      res
        .set({
          'Content-Type': 'message/rfc822',
          'Content-Disposition': `attachment; filename="${message.id}.eml"`,
          'Cache-Control': 'no-store',
        })
        .send(await readOutboxFile(deps, message));
    }),
  );

  /** The HTML part in a sandbox: no scripts, no forms, nothing from other origins but images. */
  router.get(
    '/outbox/:id/html',
    withMessage(async (res, message) => {
      const html = htmlWithoutOpenPixel(message);
      res
        .set({
          'Content-Type': 'text/html; charset=utf-8',
          'Content-Security-Policy':
            "sandbox; default-src 'none'; img-src data: https: http:; style-src 'unsafe-inline'",
          'Cache-Control': 'no-store',
          'X-Frame-Options': 'SAMEORIGIN',
        })
        .send(html);
    }),
  );

  return router;
}
