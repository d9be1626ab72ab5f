import { timingSafeEqual } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { RouteAuth, RouteMeta } from '@pigeon/contract';
import type { NextFunction, Request, Response } from 'express';
import { LRUCache } from 'lru-cache';
import { preparedRows, raw, sql } from '../db/query.js';
import type { Queryable } from '../db/sql.js';
import type { AppDeps } from '../deps.js';
import {
  bearerKey,
  type Caller,
  callerProjectOrUndefined,
  type DeferredKey,
  type KeyCheck,
  type ProjectRef,
  type SessionUser,
} from '../kit/caller.js';
import { AppError, badRequest, forbidden, unauthorized } from '../kit/errors.js';
import { findSessionUser } from '../modules/accounts/service.js';
import { readSession } from '../modules/auth/session.js';
import { hashKey, keyTypeOf } from '../modules/projects/keys.js';
import { findMembership } from '../modules/projects/membership.js';
import { applyRateLimit, countSessionRequest, currentWindow, rateLimitCtes } from './rate-limit.js';

type RoutedRequest = Request & { tsRestRoute?: { metadata?: Partial<RouteMeta> } };

/**
 * ts-rest global middleware: authenticates every contract route according to its `auth`
 * metadata, before the request is validated; counts the request against its project's rate
 * limit. A disabled project can read but not write.
 */
export function authenticate(deps: AppDeps) {
  return <R extends object>(tsRestReq: R, res: Response, next: NextFunction) => {
    const req = tsRestReq as unknown as RoutedRequest;
    const auth = req.tsRestRoute?.metadata?.auth ?? 'secret';
    if (auth === 'none') {
      // Nothing to look up or count (health, config, sign-in): no promise round trips.
      req.caller = ANONYMOUS;
      return next();
    }
    resolveCaller(deps, req, auth)
      .then(async (caller) => {
        req.caller = caller;
        await enforceRateLimit(deps, caller, res);
        refuseWritesToDisabledProject(req);
        next();
      })
      .catch(next);
  };
}

const ANONYMOUS: Caller = Object.freeze({ kind: 'anonymous' });

async function resolveCaller(deps: AppDeps, req: RoutedRequest, auth: RouteAuth): Promise<Caller> {
  const key = bearerKey(req.headers.authorization);
  // `project` routes name the project in the path: a member's session, or that project's secret key.
  if (auth === 'session' || (auth === 'project' && key === undefined)) {
    return { kind: 'session', user: await requireSessionUser(deps, req) };
  }
  const deferred = req.tsRestRoute?.metadata?.checkKeyInHandler ? deferredKey(key) : undefined;
  if (deferred) {
    await requireKnownKey(deps, deferred);
    return { kind: 'deferred-key', ...deferred };
  }
  if (key !== undefined || auth !== 'dashboard') return keyCaller(deps, key, auth);
  return dashboardSessionCaller(deps, req);
}

/** A well-formed key, to be checked by the handler's own statement; undefined for anything else. */
export function deferredKey(key: string | undefined): DeferredKey | undefined {
  const keyType = key ? keyTypeOf(key) : undefined;
  return key && keyType ? { keyType, keyHash: hashKey(key) } : undefined;
}

async function keyCaller(deps: AppDeps, key: string | undefined, auth: RouteAuth): Promise<Caller> {
  if (!key) {
    throw new AppError(401, 'UNAUTHORIZED', 'Missing API key', {
      suggestion: 'Send your project key as "Authorization: Bearer sk_…".',
    });
  }
  const keyType = keyTypeOf(key);
  if (!keyType) throw unauthorized('The API key is not valid', 'INVALID_API_KEY');
  if (keyType === 'public' && auth !== 'track') {
    throw new AppError(401, 'INVALID_API_KEY', 'This endpoint requires a secret key, not a public key', {
      suggestion: 'Use the secret key (sk_…) from your server. Public keys (pk_…) may only call POST /v1/track.',
    });
  }
  const found = await findProjectByKey(deps.db.pool, key, keyType, deps.config.rateLimitPerMinute);
  if (!found) throw unauthorized('The API key is not valid', 'INVALID_API_KEY');
  return { kind: 'key', keyType, project: found.project, hits: found.hits };
}

/**
 * Indexed lookup by the key's hash, then a constant-time comparison of the key itself. The
 * same statement counts the request against the project's rate limit: one round trip.
 */
export async function findProjectByKey(db: Queryable, key: string, keyType: KeyType, rateLimitPerMinute: number) {
  const column = keyType === 'public' ? 'public' : 'secret';
  const limited = rateLimitPerMinute > 0;
  const rows = await preparedRows<ProjectRef & { key: string; hits: number | null }>(
    db,
    `auth.${column}.${limited ? 'counted' : 'plain'}`,
    sql`WITH p AS (
       SELECT id, name, disabled, disabled_reason AS "disabledReason", ${raw(column)}_key AS key
       FROM projects WHERE ${raw(column)}_key_hash = ${hashKey(key)}
     )${limited ? sql`, ${rateLimitCtes('p', currentWindow().window, 'key')}` : raw('')}
     SELECT p.*, ${raw(limited ? '(SELECT hits FROM hit)' : 'NULL::int')} AS hits FROM p`,
  );
  const row = rows[0];
  if (!row) return undefined;
  const stored = Buffer.from(row.key);
  const given = Buffer.from(key);
  if (stored.length !== given.length || !timingSafeEqual(stored, given)) return undefined;
  const project = { id: row.id, name: row.name, disabled: row.disabled, disabledReason: row.disabledReason };
  return { project, hits: row.hits };
}

/**
 * Hashes of keys that were found lately (this process, at most 10,000, for a minute). A deferred
 * key is checked by its handler's statement, after the body is read: the body is read only for a
 * key found here or by one indexed lookup, so a client without a key makes Pigeon read nothing.
 * The cache only decides whether reading is worth it: a key regenerated since is still refused by
 * the statement (and forgotten here).
 */
const knownKeyCaches = new WeakMap<object, LRUCache<string, true>>();
const knownKeys = (deps: AppDeps) => {
  let cache = knownKeyCaches.get(deps.db.pool);
  if (!cache) {
    cache = new LRUCache<string, true>({ max: 10_000, ttl: 60_000 });
    knownKeyCaches.set(deps.db.pool, cache);
  }
  return cache;
};

/** 401 before the body is read, unless the deferred key belongs to a project (or did a moment ago). */
export async function requireKnownKey(deps: AppDeps, key: DeferredKey): Promise<void> {
  const cache = knownKeys(deps);
  const id = key.keyHash.toString('base64');
  if (cache.has(id)) return;
  const column = raw(key.keyType === 'public' ? 'public_key_hash' : 'secret_key_hash');
  const rows = await preparedRows(
    deps.db.pool,
    `auth.known.${key.keyType}`,
    sql`SELECT 1 FROM projects WHERE ${column} = ${key.keyHash}`,
  );
  if (rows.length === 0) throw unauthorized('The API key is not valid', 'INVALID_API_KEY');
  cache.set(id, true);
}

/** Answers a deferred key exactly as the lookup here would have: 401, 403, or the rate limit. */
export function settleKeyCheck(deps: AppDeps, res: ServerResponse, check: KeyCheck, key?: DeferredKey): void {
  if (!check.found) {
    if (key) knownKeys(deps).delete(key.keyHash.toString('base64'));
    throw unauthorized('The API key is not valid', 'INVALID_API_KEY');
  }
  if (check.hits !== null)
    applyRateLimit(res, deps.config.rateLimitPerMinute, check.hits, currentWindow().resetSeconds);
  if (check.disabled) throw disabledProject(check.disabledReason);
}

/** Key callers were counted by their lookup; dashboard sessions are counted here. */
async function enforceRateLimit(deps: AppDeps, caller: Caller, res: Response): Promise<void> {
  const limit = deps.config.rateLimitPerMinute;
  const project = callerProjectOrUndefined(caller);
  if (limit === 0 || !project) return;
  const { window, resetSeconds } = currentWindow();
  const hits =
    caller.kind === 'key' && caller.hits !== null ? caller.hits : await countSessionRequest(deps, project.id, window);
  applyRateLimit(res, limit, hits, resetSeconds);
}

export async function requireSessionUser(deps: AppDeps, req: Request): Promise<SessionUser> {
  const claims = await readSession(req, deps.config);
  if (claims) {
    const user = await findSessionUser(deps.db.pool, claims.userId, claims.id ?? null);
    if (user && user.sessionVersion === claims.version) {
      return { id: user.id, email: user.email, emailVerified: user.emailVerified, createdAt: user.createdAt };
    }
  }
  throw new AppError(401, 'UNAUTHORIZED', 'Sign in first', {
    suggestion: 'POST /auth/login sets the session cookie; API clients use "Authorization: Bearer sk_…" instead.',
  });
}

async function dashboardSessionCaller(deps: AppDeps, req: Request): Promise<Caller> {
  const user = await requireSessionUser(deps, req);
  const projectId = req.header('x-project-id');
  if (!projectId) throw badRequest('Send the X-Project-Id header to say which project this request is for');
  const found = await findMembership(deps.db.pool, projectId, user.id);
  if (!found) throw forbidden('You are not a member of the project named by X-Project-Id', 'NOT_A_MEMBER');
  const { id, name, disabled, disabledReason } = found.project;
  const project: ProjectRef = { id, name, disabled, disabledReason: disabledReason ?? null };
  const { role } = found.membership;
  return { kind: 'session', user, project, role };
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function refuseWritesToDisabledProject(req: Request): void {
  const project = callerProjectOrUndefined(req.caller);
  if (project?.disabled && !READ_METHODS.has(req.method)) throw disabledProject(project.disabledReason);
}

const disabledProject = (reason: string | null) =>
  forbidden('This project is disabled; it can read but not write', 'PROJECT_DISABLED', { details: { reason } });
