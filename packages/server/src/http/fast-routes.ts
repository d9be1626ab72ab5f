import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { AppDeps } from '../deps.js';
import { type BareRouter, sendJson } from '../kit/bare.js';
import { DEFAULT_BODY_LIMIT } from '../kit/body-limits.js';
import { timeRequest } from '../metrics/http.js';
import { trackingRoutes } from '../modules/engagement/tracking-routes.js';
import { createTracker } from '../modules/events/track.js';
import { bareTrackRoute } from '../modules/events/track-route.js';
import { type AppOptions, createApp } from './app.js';
import { errorAnswer, prepareErrorAnswer } from './error-handler.js';
import { assignRequestId } from './request-id.js';
import { logWhenDone } from './request-log.js';

/**
 * The server's request listener. The open pixel and the click redirect (Pigeon's own pages, not
 * API routes) and `POST /v1/track` with a key are answered on the bare node request, with the
 * request id, log line, metrics and error envelope every request gets; everything else goes to
 * the express app. The track route and express's share one tracker (one group-commit batcher).
 */
export function requestListener(deps: AppDeps, options: Omit<AppOptions, 'trackEvent'> = {}): RequestListener {
  const trackEvent = createTracker(deps);
  const app = createApp(deps, { ...options, trackEvent });
  const routers: BareRouter[] = [trackingRoutes(deps), bareTrackRoute(deps, trackEvent, DEFAULT_BODY_LIMIT)];
  const timed = deps.config.metrics.port !== undefined;
  return (req: IncomingMessage, res: ServerResponse) => {
    const bare = matchBare(routers, req);
    if (!bare) return app(req, res);
    const requestId = assignRequestId(req, res);
    logWhenDone(deps.logger, req, res, requestId);
    if (timed) timeRequest(req, res, () => bare.route);
    bare.handle(res).catch((err: unknown) => answerError(deps, req, res, requestId, err));
  };
}

function matchBare(routers: BareRouter[], req: IncomingMessage) {
  for (const router of routers) {
    const bare = router(req);
    if (bare) return bare;
  }
  return undefined;
}

function answerError(deps: AppDeps, req: IncomingMessage, res: ServerResponse, requestId: string, err: unknown) {
  const failed = {
    requestId,
    method: req.method ?? '',
    path: (req.url ?? '').split('?', 1)[0] as string,
    contentEncoding: req.headers['content-encoding'],
    bareErrors: false,
  };
  const { status, body } = errorAnswer(err, failed, deps.logger);
  if (res.headersSent) return res.end();
  prepareErrorAnswer(req, res, err);
  sendJson(res, status, body);
}
