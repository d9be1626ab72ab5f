import type { ACCOUNT, Permission } from './permissions.js';

/**
 * Who may call a route (read by the server's authentication middleware, shown in OpenAPI):
 * - `none`: anyone
 * - `session`: the dashboard session cookie
 * - `secret`: a project's secret key (`sk_…`)
 * - `track`: a public (`pk_…`) or secret key
 * - `dashboard`: a secret key, or the session cookie plus `X-Project-Id` of a project the user belongs to
 * - `project`: on `/users/@me/projects/:id/…`, the secret key of project `:id`, or the session cookie of one
 *   of its members
 */
export type RouteAuth = 'none' | 'session' | 'secret' | 'track' | 'dashboard' | 'project';

/**
 * Every route a signed-in user can reach names its permission (`PERMISSIONS` in permissions.ts):
 * a `session` route `account` (the user's own account, no project) or a permission on project
 * `:id` of its path; a `dashboard` route on the project of `X-Project-Id` (or of the key); a
 * `project` route on project `:id`. A route without one does not compile.
 */
export type RouteMeta = RouteMetaOptions &
  (
    | { auth: 'none' | 'secret' | 'track'; permission?: never }
    | { auth: 'session'; permission: Permission | typeof ACCOUNT }
    | { auth: 'dashboard' | 'project'; permission: Permission }
  );

interface RouteMetaOptions {
  /** Validation failures answer the bare `{ error }` 400 instead of the 422 envelope (spec §7). */
  errorStyle?: 'bare';
  /**
   * The handler checks a key itself, in the same statement as its work (one round trip on the
   * hottest route), and claims an Idempotency-Key in that statement too.
   */
  checkKeyInHandler?: boolean;
  /**
   * A GET that changes state (the spec's `GET /auth/logout`): cross-site requests made with the
   * session cookie are refused as for a write (Fetch Metadata), so another site cannot sign a person out.
   */
  changesState?: boolean;
  /** The request body example of the OpenAPI documents, when a sampled one would not work as sent. */
  example?: unknown;
}

export const meta = (m: RouteMeta) => m;

/** Name of the dashboard session cookie. */
export const SESSION_COOKIE = 'pigeon_session';
