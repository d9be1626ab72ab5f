import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type pg from 'pg';
import { type BatchedDelete, deleteInBatches } from '../../db/batched-delete.js';
import { preparedRows, raw, runStatement, sql } from '../../db/query.js';
import { prepared, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { AppError, validationFailed } from '../../kit/errors.js';

const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

/** The request's Idempotency-Key, checked (422 when malformed), or null without one. */
export function idempotencyKeyOf(req: IncomingMessage): string | null {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return null;
  if (typeof key !== 'string' || !VALID_KEY.test(key)) throw badKey();
  return key;
}

const badKey = () =>
  validationFailed([
    { field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters', code: 'invalid_string' },
  ]);

export interface Claim {
  request: string;
  /** A digest of the first request's body (null on a track's claim, and claims made before it was kept). */
  request_hash: string | null;
  status_code: number | null;
  created_at: Date;
  /** The body of a 2xx first response (null otherwise). */
  response: unknown;
  /** A track's claim: the event it recorded, which stands for its request. */
  event: { name: string; email: string; data: unknown } | null;
}

/** The digest a claim keeps of its request's body, to tell a retry from another request under the same key. */
export const requestHashOf = (body: unknown) =>
  createHash('sha256')
    .update(JSON.stringify(body ?? null))
    .digest('base64url');

/** A claim released before it could be read: the caller may simply retry, as of `now`. */
const unknownClaim = (request: string, now: Date): Claim => ({
  request,
  request_hash: null,
  status_code: null,
  created_at: now,
  response: null,
  event: null,
});

/**
 * Idempotency-Key (spec §4, DESIGN §3): the first request with a key claims it atomically;
 * later ones within its lifetime get 409 IDEMPOTENCY_KEY_REUSED and are not performed, with the
 * stored body of a 2xx first response as `details.originalResponse` (DESIGN §3), so a client's
 * retry can return the original result. A later request that is not a retry (another endpoint, or
 * another body) is a client bug that a replay would hide: it gets 422 IDEMPOTENCY_KEY_REUSED, as
 * Stripe and Resend answer it. A claim whose request ended 4xx, or 5xx with its work
 * certainly rolled back (the error handler says so in `res.locals.workRolledBack`), is released so
 * the client can retry. A 5xx whose outcome is unknown (a lost database connection, an exception)
 * keeps the claim.
 */
export function idempotency(deps: AppDeps) {
  const db = deps.db.pool;
  return <R extends object>(tsRestReq: R, res: Response, next: NextFunction) => {
    const req = tsRestReq as unknown as Request;
    const key = req.header('idempotency-key');
    if (key === undefined) return next();
    if (!VALID_KEY.test(key)) return next(badKey());
    const projectId = callerProject(req).id;
    const request = `${req.method} ${req.path}`;
    const hash = requestHashOf(req.body);
    claimKey(deps, projectId, key, request, hash)
      .then((existing) => {
        if (existing) {
          const retry = existing.request === request && (existing.request_hash ?? hash) === hash;
          throw reused(key, existing, retry);
        }
        settleOnResponse(res, (status, body) =>
          performedNothing(status, res) ? releaseKey(db, projectId, key) : settleKey(db, projectId, key, status, body),
        );
        next();
      })
      .catch(next);
  };
}

const performedNothing = (status: number, res: Response) =>
  (status >= 400 && status < 500) || (status >= 500 && res.locals.workRolledBack === true);

/** A claim whose request performed nothing (refused, or rolled back): the key is free again. */
const releaseKey = (db: Queryable, projectId: string, key: string) =>
  preparedRows(db, 'idem.release', sql`DELETE FROM idempotency_keys WHERE project_id = ${projectId} AND key = ${key}`);

/** A claim's outcome: its status, and for a 2xx the body a retry is answered with. */
const settleKey = (db: Queryable, projectId: string, key: string, status: number, body: unknown) =>
  preparedRows(
    db,
    'idem.settle',
    sql`UPDATE idempotency_keys SET status_code = ${status}, response = ${status < 300 ? JSON.stringify(body) : null}
        WHERE project_id = ${projectId} AND key = ${key}`,
  );

/** Inserts the claim, or takes over an expired one; returns the live claim of someone else. */
async function claimKey(
  deps: AppDeps,
  projectId: string,
  key: string,
  request: string,
  requestHash: string,
): Promise<Claim | undefined> {
  const rows = await preparedRows<{ claimed: boolean }>(
    deps.db.pool,
    'idem.claim',
    // The project's row lock stands in for a foreign key (see deleteProjectKeys).
    sql`INSERT INTO idempotency_keys AS k (project_id, key, request, request_hash, expires_at)
        SELECT p.id, ${key}::text, ${request}::text, ${requestHash}::text,
               now() + make_interval(hours => ${deps.config.idempotencyTtlHours}::int)
        FROM projects p WHERE p.id = ${projectId}::uuid FOR KEY SHARE
        ON CONFLICT (project_id, key) DO UPDATE
          SET request = EXCLUDED.request, request_hash = EXCLUDED.request_hash, status_code = NULL,
              response = NULL, event_id = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
          WHERE k.expires_at <= now()
        RETURNING true AS claimed`,
  );
  if (rows[0]?.claimed) return undefined;
  // Released between our insert and this read: the caller may simply retry.
  return (await findClaim(deps.db.pool, projectId, key)) ?? unknownClaim(request, deps.clock.now());
}

/**
 * The live claim of a key. A track's claim keeps the id of the event it recorded (it was claimed in
 * the track statement, see `events/track-statement.ts`), and its response is rebuilt from that event.
 */
export async function findClaim(db: Queryable, projectId: string, key: string): Promise<Claim | undefined> {
  const [claim] = await prepared<Claim>(
    db,
    'idem.get',
    `SELECT k.request, k.request_hash, k.status_code, k.created_at,
            COALESCE(k.response, CASE WHEN e.id IS NOT NULL THEN jsonb_build_object('success', true, 'data',
              jsonb_build_object('contact', e.contact_id, 'event', e.id,
                'timestamp', to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))) END) AS response,
            CASE WHEN e.id IS NOT NULL THEN jsonb_build_object('name', e.name, 'email', c.email, 'data', e.data) END AS event
       FROM idempotency_keys k
       LEFT JOIN events e ON e.id = k.event_id
       LEFT JOIN contacts c ON c.id = e.contact_id AND c.project_id = k.project_id
      WHERE k.project_id = $1 AND k.key = $2`,
    [projectId, key],
  );
  return claim;
}

/** A key claimed and settled at once, with the work it stands for (`recordKey`). */
export interface KeyRecord {
  key: string;
  /** What the key stands for (`SMTP submission`), as `request` of a claim. */
  request: string;
  requestHash: string;
  /** The answer a retry gets (`Claim.response`). */
  response: unknown;
  ttlHours: number;
}

/**
 * Records a key claimed and settled in one statement, in the caller's transaction, so the key and
 * the work it stands for commit together or not at all: no claim is ever in flight or of unknown
 * outcome (as the track statement's keys). An expired claim is taken over. False when a live claim
 * holds the key: the caller rolls back its work and answers from `findClaim`. A concurrent record of
 * the same key waits for this transaction and then finds it.
 */
export async function recordKey(db: Queryable, projectId: string, record: KeyRecord): Promise<boolean> {
  const rows = await preparedRows<{ recorded: boolean }>(
    db,
    'idem.record',
    sql`INSERT INTO idempotency_keys AS k (project_id, key, request, request_hash, status_code, response, expires_at)
        SELECT p.id, ${record.key}::text, ${record.request}::text, ${record.requestHash}::text, 200,
               ${JSON.stringify(record.response)}::jsonb, now() + make_interval(hours => ${record.ttlHours}::int)
        FROM projects p WHERE p.id = ${projectId}::uuid FOR KEY SHARE
        ON CONFLICT (project_id, key) DO UPDATE
          SET request = EXCLUDED.request, request_hash = EXCLUDED.request_hash, status_code = EXCLUDED.status_code,
              response = EXCLUDED.response, event_id = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
          WHERE k.expires_at <= now()
        RETURNING true AS recorded`,
  );
  return rows[0]?.recorded === true;
}

/**
 * The answer to a request whose key another request holds: 409 for a retry of it (or, if it was
 * released meanwhile, a retryable one), 422 when `isRetryOf` says it is another request.
 */
export async function reusedKeyError(
  db: Queryable,
  projectId: string,
  key: string,
  request: string,
  now: Date,
  isRetryOf: (claim: Claim) => boolean,
) {
  const claim = (await findClaim(db, projectId, key)) ?? unknownClaim(request, now);
  return reused(key, claim, isRetryOf(claim));
}

const isSuccess = (status: number | null) => status !== null && status >= 200 && status < 300;

/** 409 with the first answer for a retry; 422 for another request under the key (not a retry: nothing to replay). */
function reused(key: string, existing: Claim, retry = true): AppError {
  const original = {
    key,
    originalRequest: existing.request,
    originalRequestAt: existing.created_at.toISOString(),
    originalStatusCode: existing.status_code,
  };
  if (!retry) {
    return new AppError(
      'unprocessable',
      'IDEMPOTENCY_KEY_REUSED',
      'This Idempotency-Key was used for another request (another endpoint or another body); this one was not performed',
      {
        details: original,
        suggestion: 'Use a new key for each new request; send a retry with exactly the body of the first request.',
      },
    );
  }
  return new AppError(
    'conflict',
    'IDEMPOTENCY_KEY_REUSED',
    'This Idempotency-Key was already used; the request was not performed again',
    {
      details: {
        ...original,
        ...(isSuccess(existing.status_code) ? { originalResponse: existing.response } : {}),
      },
      suggestion:
        'Use a new key for a new request. A retry of the same request can rely on the first result (details.originalResponse when it succeeded).',
    },
  );
}

/**
 * Runs `settle` with the final status before the response goes out, so a client that sees the
 * response and retries at once already finds the claim released (4xx) or settled.
 */
function settleOnResponse(res: Response, settle: (status: number, body: unknown) => Promise<unknown>): void {
  const json = res.json.bind(res);
  let settled = false;
  res.json = (body: unknown) => {
    if (settled) return json(body);
    settled = true;
    settle(res.statusCode, body)
      .catch(() => {}) // a failed settle leaves the claim in flight until it expires; never lose the response
      .finally(() => json(body));
    return res;
  };
}

/**
 * Deletes a project's keys, in the transaction that deleted the project (the table has no foreign key
 * to `projects`, see Migration20261228000000). A claim takes the project's row lock, so one that was
 * running waited for the deletion to commit, or the deletion for it: either it saw no project, or its
 * key is visible here.
 */
export async function deleteProjectKeys(db: Queryable, projectId: string): Promise<void> {
  await runStatement(db, sql`DELETE FROM idempotency_keys WHERE project_id = ${projectId}::uuid`);
}

/** Expired key claims, removed in bounded statements (the clean-up job, every minute). */
export function deleteExpiredIdempotencyKeys(pool: pg.Pool, batch?: number): Promise<BatchedDelete> {
  return deleteInBatches(pool, raw('idempotency_keys'), raw('expires_at <= now()'), batch);
}
