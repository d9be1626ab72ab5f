import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { AppDeps } from '../deps.js';
import { trackingRoutes } from '../modules/engagement/tracking-routes.js';
import { assignRequestId } from './request-id.js';
import { logWhenDone } from './request-log.js';

/**
 * The server's request listener: the open pixel and the click redirect (Pigeon's own pages, not
 * API routes) are answered on the bare node request, with the request id and log line every
 * request gets; everything else goes to the express app.
 */
export function requestListener(deps: AppDeps, app: Express): RequestListener {
  const tracking = trackingRoutes(deps);
  return (req: IncomingMessage, res: ServerResponse) => {
    const handle = tracking(req);
    if (!handle) return app(req, res);
    logWhenDone(deps.logger, req, res, assignRequestId(req, res));
    // A handler's rejection is its own bug (recording errors are caught inside): answer 500, log it.
    handle(res).catch((err: unknown) => {
      deps.logger.error({ err, method: req.method, url: req.url }, 'unexpected error');
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end();
    });
  };
}
