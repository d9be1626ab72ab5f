import type { ServerResponse } from 'node:http';
import type pg from 'pg';
import { preparedRows, raw, runStatement, type Sql, sql } from '../../db/query.js';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../kit/errors.js';

const WINDOW_SECONDS = 60;

/** The current fixed one-minute window and the seconds until it ends. */
export function currentWindow(now = Date.now()) {
  const nowSeconds = now / 1000;
  const window = Math.floor(nowSeconds / WINDOW_SECONDS);
  return { window, resetSeconds: Math.max(1, Math.ceil((window + 1) * WINDOW_SECONDS - nowSeconds)) };
}

/** Each kind of caller has its own counters (and so the project's whole budget). */
export const CALLER = { key: 0, session: 1 } as const;

/**
 * Two CTEs that count `requests` requests of `caller` for the project in `projectRows` (a CTE
 * yielding `id`) in the current window and expose the window's total as `hit.hits`. One counter row
 * per project, caller and window: a concurrent statement waits for the row and adds to what the
 * other committed, so the count is exact under any concurrency (with a counter row per connection,
 * as before, requests in flight on other connections were not seen: 1,002 of 1,000 went through).
 * The row is held only while one statement runs (these statements are their own transactions).
 */
export const rateLimitCtes = (
  projectRows: string,
  window: number,
  caller: keyof typeof CALLER,
  requests = 1,
): Sql => sql`
  hit_own AS (
    INSERT INTO rate_limit_counters AS r (project_id, caller, window_start, shard, hits)
    SELECT id, ${raw(String(CALLER[caller]))}, ${window}::bigint, 0, ${requests}::int FROM ${raw(projectRows)}
    ON CONFLICT (project_id, caller, window_start, shard) DO UPDATE SET hits = r.hits + EXCLUDED.hits
    RETURNING project_id, hits
  ), hit AS (SELECT hits FROM hit_own)`;

/** Counts a dashboard session's request (session + X-Project-Id), on the sessions' own counters. */
export async function countSessionRequest(deps: AppDeps, projectId: string, window: number): Promise<number> {
  const [row] = await preparedRows<{ hits: number }>(
    deps.db.pool,
    'ratelimit.session',
    sql`WITH p AS (SELECT ${projectId}::uuid AS id), ${rateLimitCtes('p', window, 'session')} SELECT hits FROM hit`,
  );
  return row?.hits ?? 1;
}

/**
 * Per project, fixed one-minute windows counted in PostgreSQL, so every process shares one
 * budget. Sets the RateLimit-* headers; over the limit, answers 429 with Retry-After.
 */
export function applyRateLimit(res: ServerResponse, limit: number, hits: number, resetSeconds: number): void {
  res.setHeader('RateLimit-Limit', String(limit));
  res.setHeader('RateLimit-Remaining', String(Math.max(0, limit - hits)));
  res.setHeader('RateLimit-Reset', String(resetSeconds));
  if (hits > limit) {
    res.setHeader('Retry-After', String(resetSeconds));
    throw new AppError('too-many', 'RATE_LIMIT_EXCEEDED', `More than ${limit} requests in a minute for this project`, {
      details: { limit, retryAfterSeconds: resetSeconds },
      suggestion: 'Slow down and retry after the number of seconds in Retry-After.',
    });
  }
}

/** Drops the counters of windows before the previous minute (the clean-up job, every minute). */
export async function deleteFinishedWindows(pool: pg.Pool): Promise<void> {
  await runStatement(
    pool,
    sql`DELETE FROM rate_limit_counters WHERE window_start < floor(extract(epoch FROM now()) / 60) - 1`,
  );
}
