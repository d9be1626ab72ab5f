import type { NextFunction, Request, Response } from 'express';
import { httpRateLimited, httpRequestDuration } from './registry.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Times every request by its route template (the pattern express matched, so a path's ids never
 * become label values; `unmatched` when no route did). Mounted only when metrics are on.
 */
export function httpMetrics() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    res.once('finish', () => {
      const route = typeof req.route?.path === 'string' ? `${req.baseUrl}${req.route.path}` : 'unmatched';
      const method = METHODS.has(req.method) ? req.method : 'other';
      const statusClass = `${Math.floor(res.statusCode / 100)}xx`;
      httpRequestDuration.observe({ method, route, status_class: statusClass }, (performance.now() - started) / 1000);
      if (res.statusCode === 429) httpRateLimited.inc();
    });
    next();
  };
}
