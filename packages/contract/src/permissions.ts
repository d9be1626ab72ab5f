import { z } from 'zod';

/** A user's role in a project (`memberships.role`). */
export const Role = z.enum(['OWNER', 'ADMIN', 'MEMBER']);
export type Role = z.infer<typeof Role>;

/**
 * What a route does to its project, named on every route a signed-in user can reach
 * (`RouteMeta.permission`); `PERMISSIONS` says which roles may.
 */
export const Permission = z.enum(['project.use', 'project.manage', 'project.own']);
export type Permission = z.infer<typeof Permission>;

/**
 * The one table of who may do what. The server checks it once per request (`authenticate`),
 * OpenAPI shows it per operation (`x-pigeon-permission`), and a test calls every route as each
 * role against it.
 * - `project.use`: the project's data and its settings read (contacts, templates, campaigns,
 *   workflows, events, members listed, security state)
 * - `project.manage`: settings, keys, members, sender and tracking domains, webhook endpoints, billing
 * - `project.own`: delete the project or wipe its data
 */
export const PERMISSIONS = {
  'project.use': ['OWNER', 'ADMIN', 'MEMBER'],
  'project.manage': ['OWNER', 'ADMIN'],
  'project.own': ['OWNER'],
} as const satisfies Record<Permission, readonly Role[]>;

/**
 * A secret key is its project's own key: it acts as the OWNER and passes every permission of the
 * routes it may call (`dashboard` and `project` ones). Routes no key may call are `auth: 'session'`.
 */
export const SECRET_KEY_ROLE: Role = 'OWNER';

/** A session route about the signed-in user's own account: no project, so no role. */
export const ACCOUNT = 'account';

/** Whether a role may do what a permission names. */
export const permits = (permission: Permission, role: Role): boolean =>
  (PERMISSIONS[permission] as readonly Role[]).includes(role);

/** The roles a permission needs, as the 403 `INSUFFICIENT_ROLE` names them. */
export const insufficientRoleMessage = (permission: Permission): string =>
  `This needs the ${PERMISSIONS[permission].join(' or ')} role in the project`;
