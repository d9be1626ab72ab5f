import type { RouteAuth, RouteMeta } from '@pigeon/contract';
import type { NextFunction, Request, Response } from 'express';
import type { AppDeps } from '../deps.js';
import { bearerKey, type Caller, callerProjectOrUndefined, type ProjectRef } from '../kit/caller.js';
import { AppError, badRequest, forbidden, unauthorized } from '../kit/errors.js';
import { requireSessionUser } from '../modules/accounts/session-user.js';
import {
  deferredKey,
  disabledProjectError,
  findProjectByKey,
  requireKnownKey,
} from '../modules/projects/key-lookup.js';
import { keyTypeOf } from '../modules/projects/keys.js';
import { findMembership } from '../modules/projects/membership.js';
import { applyRateLimit, countSessionRequest, currentWindow } from '../modules/rate-limits/service.js';
import { checkPermission } from './permission.js';

type RoutedRequest = Request & { tsRestRoute?: { metadata?: Partial<RouteMeta> } };

/**
 * ts-rest global middleware: authenticates every contract route according to its `auth`
 * metadata, before the request is validated; counts the request against its project's rate
 * limit. A disabled project can read but not write. Then the route's permission: the caller's
 * role in its project, checked against the contract's table (`checkPermission`).
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
        req.access = await checkPermission(deps, req, caller, req.tsRestRoute?.metadata ?? {});
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

async function keyCaller(deps: AppDeps, key: string | undefined, auth: RouteAuth): Promise<Caller> {
  if (!key) {
    throw new AppError('unauthenticated', 'UNAUTHORIZED', 'Missing API key', {
      suggestion: 'Send your project key as "Authorization: Bearer sk_…".',
    });
  }
  const keyType = keyTypeOf(key);
  if (!keyType) throw unauthorized('The API key is not valid', 'INVALID_API_KEY');
  if (keyType === 'public' && auth !== 'track') {
    throw new AppError('unauthenticated', 'INVALID_API_KEY', 'This endpoint requires a secret key, not a public key', {
      suggestion: 'Use the secret key (sk_…) from your server. Public keys (pk_…) may only call POST /v1/track.',
    });
  }
  const found = await findProjectByKey(deps.db.pool, key, keyType, deps.config.rateLimitPerMinute);
  if (!found) throw unauthorized('The API key is not valid', 'INVALID_API_KEY');
  return { kind: 'key', keyType, project: found.project, hits: found.hits };
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
  if (project?.disabled && !READ_METHODS.has(req.method)) throw disabledProjectError(project.disabledReason);
}
