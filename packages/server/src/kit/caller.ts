import type { Role } from '@pigeon/contract';

/** Which kind of project key a request carries: `pk_…` or `sk_…`. */
export type KeyType = 'public' | 'secret';

export interface ProjectRef {
  id: string;
  name: string;
  disabled: boolean;
  disabledReason: string | null;
}

export interface SessionUser {
  id: string;
  email: string;
  emailVerified: boolean;
  createdAt: Date;
}

/**
 * A well-formed key on a route that checks keys in its own statement (`checkKeyInHandler`): no
 * lookup here; the handler's statement finds the project by the hash, counts the rate limit and
 * writes only when both pass, then reports back through `settleKeyCheck`. One round trip.
 */
export interface DeferredKey {
  keyType: KeyType;
  keyHash: Buffer;
}

/** What a statement that checked a deferred key found. */
export type KeyCheck =
  | { found: false }
  | { found: true; disabled: boolean; disabledReason: string | null; hits: number | null };

/** Who is calling, resolved once per request by `authenticate`. */
export type Caller =
  | { kind: 'anonymous' }
  | { kind: 'key'; keyType: KeyType; project: ProjectRef; hits: number | null }
  | ({ kind: 'deferred-key' } & DeferredKey)
  | { kind: 'session'; user: SessionUser; project?: ProjectRef; role?: Role };

/**
 * The project a route with a permission acts on, and the caller's role in it: resolved and checked
 * against the route's permission by `authenticate` (a secret key acts as `SECRET_KEY_ROLE`).
 */
export interface ProjectAccess {
  project: ProjectRef;
  role: Role;
}

/** A signed-in member's access, with who they are (the routes only a session reaches). */
export interface MemberAccess extends ProjectAccess {
  userId: string;
}

declare global {
  namespace Express {
    interface Request {
      caller: Caller;
      /** Set by `authenticate` on routes whose permission names a project. */
      access?: ProjectAccess;
    }
  }
}

/** The key of an `Authorization: Bearer …` header ('' when malformed), undefined without the header. */
export function bearerKey(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? '';
}

/** The project a key or a session with X-Project-Id acts on, if any. */
export const callerProjectOrUndefined = (caller: Caller) =>
  caller.kind === 'key' || caller.kind === 'session' ? caller.project : undefined;

/** The project a key- or dashboard-authenticated request acts on. */
export function callerProject(req: { caller: Caller }): ProjectRef {
  const project = callerProjectOrUndefined(req.caller);
  if (!project) throw new Error('route has no project: check its auth metadata');
  return project;
}

/** The signed-in user of a session-authenticated request. */
export function callerUser(req: { caller: Caller }): SessionUser {
  if (req.caller.kind !== 'session') throw new Error('route has no session: check its auth metadata');
  return req.caller.user;
}

/** The project and role of a route with a project permission (checked by `authenticate`). */
export function callerAccess(req: { caller: Caller; access?: ProjectAccess }): ProjectAccess {
  if (!req.access) throw new Error('route has no project permission: check its metadata');
  return req.access;
}

/** The signed-in member's access, on a route only a session reaches. */
export function callerMember(req: { caller: Caller; access?: ProjectAccess }): MemberAccess {
  return { ...callerAccess(req), userId: callerUser(req).id };
}
