import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { httpRateLimited, httpRequestDuration } from './registry.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Times every request by its route template (the pattern express matched, so a path's ids never
 * become label values; `unmatched` when no route did). Mounted only when metrics are on.
 */
export function httpMetrics() {
  return (req: Request, res: Response, next: NextFunction): void => {
    timeRequest(req, res, () =>
      typeof req.route?.path === 'string' ? `${req.baseUrl}${req.route.path}` : 'unmatched',
    );
    next();
  };
}

/** Observes the request's duration when its answer is sent, under the route template `route()` names then. */
export function timeRequest(req: IncomingMessage, res: ServerResponse, route: () => string): void {
  const started = performance.now();
  res.once('finish', () => {
    const method = METHODS.has(req.method ?? '') ? (req.method as string) : 'other';
    const statusClass = `${Math.floor(res.statusCode / 100)}xx`;
    httpRequestDuration.observe(
      { method, route: route(), status_class: statusClass },
      (performance.now() - started) / 1000,
    );
    if (res.statusCode === 429) httpRateLimited.inc();
  });
}
