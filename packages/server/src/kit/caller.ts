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

/** Who is calling, resolved once per request by `authenticate`. */
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

export type Caller =
  | { kind: 'anonymous' }
  | { kind: 'key'; keyType: KeyType; project: ProjectRef; hits: number | null }
  | ({ kind: 'deferred-key' } & DeferredKey)
  | { kind: 'session'; user: SessionUser; project?: ProjectRef; role?: Role };

declare global {
  namespace Express {
    interface Request {
      caller: Caller;
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
