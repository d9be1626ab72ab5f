import type { Response } from 'express';
import { prepared } from '../db/sql.js';
import type { AppDeps } from '../deps.js';
import { AppError } from './errors.js';

const WINDOW_SECONDS = 60;

/** The current fixed one-minute window and the seconds until it ends. */
export function currentWindow(now = Date.now()) {
  const nowSeconds = now / 1000;
  const window = Math.floor(nowSeconds / WINDOW_SECONDS);
  return { window, resetSeconds: Math.max(1, Math.ceil((window + 1) * WINDOW_SECONDS - nowSeconds)) };
}

/**
 * SQL that counts one request of a project in the current window and returns the count as
 * `hits`. `$window` is the window parameter; `projectRows` a FROM clause yielding `id`.
 */
export const countHitSql = (projectRows: string, window: string) => `
  INSERT INTO rate_limit_counters AS r (project_id, window_start, hits)
  SELECT id, ${window}, 1 FROM ${projectRows}
  ON CONFLICT (project_id, window_start) DO UPDATE SET hits = r.hits + 1
  RETURNING hits`;

/** Counts a request of a project whose caller was not resolved by key (session + X-Project-Id). */
export async function countRequest(deps: AppDeps, projectId: string, window: number): Promise<number> {
  const [row] = await prepared<{ hits: number }>(
    deps.db.pool,
    'ratelimit.hit',
    countHitSql('(SELECT $1::uuid AS id) p', '$2::bigint'),
    [projectId, window],
  );
  return row?.hits ?? 1;
}

/**
 * Per project, fixed one-minute windows counted in PostgreSQL, so every process shares one
 * budget. Sets the RateLimit-* headers; over the limit, answers 429 with Retry-After.
 */
export function applyRateLimit(res: Response, limit: number, hits: number, resetSeconds: number): void {
  res.setHeader('RateLimit-Limit', String(limit));
  res.setHeader('RateLimit-Remaining', String(Math.max(0, limit - hits)));
  res.setHeader('RateLimit-Reset', String(resetSeconds));
  if (hits > limit) {
    res.setHeader('Retry-After', String(resetSeconds));
    throw new AppError(429, 'RATE_LIMIT_EXCEEDED', `More than ${limit} requests in a minute for this project`, {
      details: { limit, retryAfterSeconds: resetSeconds },
      suggestion: 'Slow down and retry after the number of seconds in Retry-After.',
    });
  }
}
