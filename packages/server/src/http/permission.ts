import {
  ACCOUNT,
  insufficientRoleMessage,
  permits,
  type RouteAuth,
  type RouteMeta,
  SECRET_KEY_ROLE,
} from '@pigeon/contract';
import type { Request } from 'express';
import type { AppDeps } from '../deps.js';
import type { Caller, ProjectAccess } from '../kit/caller.js';
import { forbidden, notFound } from '../kit/errors.js';
import { findMembership } from '../modules/projects/membership.js';

/**
 * The route's permission (the contract's `PERMISSIONS`), checked once for every caller kind: the
 * project it acts on and the caller's role there, or 404 for a project the caller is not in
 * (another project's id), or 403 INSUFFICIENT_ROLE. Undefined for a route without a project.
 */
export async function checkPermission(
  deps: AppDeps,
  req: Request,
  caller: Caller,
  meta: Partial<RouteMeta>,
): Promise<ProjectAccess | undefined> {
  const { permission, auth = 'secret' } = meta;
  if (permission === undefined || permission === ACCOUNT) return undefined;
  const access = await accessOf(deps, req, caller, auth);
  if (!permits(permission, access.role)) throw forbidden(insufficientRoleMessage(permission), 'INSUFFICIENT_ROLE');
  return access;
}

async function accessOf(deps: AppDeps, req: Request, caller: Caller, auth: RouteAuth): Promise<ProjectAccess> {
  // A path-scoped route (`auth: 'project'`, or a session route) names its project as `:id`.
  const pathId = auth === 'dashboard' ? undefined : String(req.params.id);
  if (caller.kind === 'key') {
    if (pathId !== undefined && pathId !== caller.project.id) throw notFound('Project');
    return { project: caller.project, role: SECRET_KEY_ROLE };
  }
  if (caller.kind !== 'session') throw new Error(`a ${caller.kind} caller on a route with a permission`);
  if (pathId === undefined) {
    if (!caller.project || !caller.role) throw new Error('a dashboard session without X-Project-Id');
    return { project: caller.project, role: caller.role };
  }
  const found = await findMembership(deps.db.pool, pathId, caller.user.id);
  if (!found) throw notFound('Project');
  const { id, name, disabled, disabledReason } = found.project;
  return { project: { id, name, disabled, disabledReason: disabledReason ?? null }, role: found.membership.role };
}
