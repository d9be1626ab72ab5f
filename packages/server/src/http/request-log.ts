import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger.js';

/**
 * One structured line per request when it ends (`request completed`, or `request aborted` when
 * the client went away first; 5xx at error level), with the request id, method, URL, status and
 * time. `/health` is not logged (probes would drown the log). Below `info` level nothing is
 * attached to the request at all: the hot paths pay for logging only when it is wanted.
 */
export function requestLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    logWhenDone(logger, req, res, req.requestId, req.originalUrl);
    next();
  };
}

/** The same line for a request answered outside express (`http/fast-routes.ts`). */
export function logWhenDone(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  url = req.url ?? '',
): void {
  if (url === '/health' || !logger.isLevelEnabled('info')) return;
  const started = performance.now();
  res.once('close', () => {
    const line = {
      req: { id: requestId, method: req.method, url },
      res: { statusCode: res.statusCode },
      responseTime: Math.round(performance.now() - started),
    };
    if (!res.writableFinished) logger.warn(line, 'request aborted');
    else if (res.statusCode >= 500) logger.error(line, 'request errored');
    else logger.info(line, 'request completed');
  });
}
