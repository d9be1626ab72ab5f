import {
  ACCOUNT,
  insufficientRoleMessage,
  PERMISSIONS,
  type Permission,
  type Role,
  type RouteMeta,
  SECRET_KEY_ROLE,
} from '@pigeon/contract';
import { type AppRoute, isAppRouteNoBody } from '@ts-rest/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type SignedUp, signUp, type TestProject } from './accounts.js';
import { api, bodyOf } from './api.js';
import { startTestPigeon, type TestPigeon, type TestResponse } from './helpers.js';
import { allRoutes, fillPath } from './security/contract-routes.js';

/**
 * Roles as data: every contract route with a project permission, called as each role (and as the
 * project's secret key, which counts as `SECRET_KEY_ROLE`), is refused with 403 INSUFFICIENT_ROLE
 * exactly when the contract's `PERMISSIONS` leaves the role out. Requests carry ids that name
 * nothing (random uuids) and empty bodies: the permission is checked before the body is read, so
 * a 404 or 422 is "not refused by role". A signed-in user outside the project gets 404 for a
 * project in the path and 403 NOT_A_MEMBER for one named by X-Project-Id.
 */

let pigeon: TestPigeon;
let users: Record<Role, SignedUp>;
let outsider: SignedUp;
let project: TestProject;

const ROLES: Role[] = ['MEMBER', 'ADMIN', 'OWNER'];

beforeAll(async () => {
  pigeon = await startTestPigeon({ role: 'api', env: { RATE_LIMIT_PER_MINUTE: '0' } });
  users = { OWNER: await signUp(pigeon), ADMIN: await signUp(pigeon), MEMBER: await signUp(pigeon) };
  outsider = await signUp(pigeon);
  await createProject(pigeon, outsider.cookie, 'Elsewhere');
  project = await projectWithRoles();
}, 60_000);
afterAll(() => pigeon?.stop());

/** A project of `users.OWNER` with `users.ADMIN` and `users.MEMBER` added in their roles. */
async function projectWithRoles(): Promise<TestProject> {
  const created = await createProject(pigeon, users.OWNER.cookie);
  for (const role of ['ADMIN', 'MEMBER'] as const) {
    const res = await api(pigeon, { cookie: users.OWNER.cookie }).projects.inviteMember({
      params: { id: created.id },
      body: { email: users[role].user.email, role },
    });
    bodyOf(res, 201);
  }
  return created;
}

/** The project's secret key now (a route walked before may have regenerated it). */
async function currentSecretKey(projectId: string): Promise<string> {
  const res = await api(pigeon, { cookie: users.OWNER.cookie }).users.listProjects();
  return bodyOf(res, 200).find((p) => p.id === projectId)?.secretKey ?? '';
}

interface Walked {
  id: string;
  route: AppRoute;
  auth: 'session' | 'dashboard' | 'project';
  permission: Permission;
}

function routesWithPermission(): Walked[] {
  return allRoutes().flatMap(([id, route]) => {
    const { auth, permission } = (route.metadata ?? {}) as Partial<RouteMeta>;
    if (permission === undefined || permission === ACCOUNT) return [];
    return [{ id, route, auth: auth as Walked['auth'], permission }];
  });
}

/** The route's path on a project: its own id where the path names a project, a random uuid elsewhere. */
const pathOn = (route: AppRoute, projectId: string) =>
  fillPath(route.path, (param) => {
    if (param === 'projectId' || (param === 'id' && /\/projects\/:id/.test(route.path))) return projectId;
    return { field: 'plan', eventName: 'signup' }[param] ?? crypto.randomUUID();
  });

const hasBody = (route: AppRoute) => 'body' in route && route.body !== undefined && !isAppRouteNoBody(route.body);

function call(route: AppRoute, projectId: string, headers: Record<string, string>): Promise<TestResponse> {
  // untyped: every route (each route with a project permission, an empty body)
  return pigeon.request(route.method, pathOn(route, projectId), { headers, body: hasBody(route) ? {} : undefined });
}

const refusedByRole = (res: TestResponse) => res.status === 403 && res.body?.error?.code === 'INSUFFICIENT_ROLE';

describe('the role table', () => {
  it('drives every route with a project permission, for each role and the secret key', async () => {
    const walked = routesWithPermission();
    expect(walked.length).toBeGreaterThan(100);
    const mismatches: string[] = [];
    for (const { id, route, auth, permission } of walked) {
      // Deleting the project is walked on a project of its own (the OWNER, last, deletes it).
      const target = id === 'users.deleteProject' ? await projectWithRoles() : project;
      const roles: readonly Role[] = PERMISSIONS[permission];
      const callers = ROLES.map((role): [string, Role, Record<string, string>] => {
        const cookie = { cookie: users[role].cookie };
        return [role, role, auth === 'dashboard' ? { ...cookie, 'x-project-id': target.id } : cookie];
      });
      if (auth !== 'session') {
        const key = { authorization: `Bearer ${await currentSecretKey(target.id)}` };
        callers.splice(2, 0, ['secret key', SECRET_KEY_ROLE, key]);
      }
      for (const [who, role, headers] of callers) {
        const res = await call(route, target.id, headers);
        const expected = roles.includes(role) ? 'allowed' : 'refused';
        const got = refusedByRole(res) ? 'refused' : 'allowed';
        if (res.status >= 500 || got !== expected) {
          mismatches.push(`${id} as ${who}: ${res.status} ${res.body?.error?.code ?? ''}, the table says ${expected}`);
        } else if (got === 'refused' && res.body.error.message !== insufficientRoleMessage(permission)) {
          mismatches.push(`${id} as ${who}: message ${res.body.error.message}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  }, 120_000);

  it('answers a signed-in user outside the project 404 for a project in the path, 403 NOT_A_MEMBER for X-Project-Id', async () => {
    const wrong: string[] = [];
    for (const { id, route, auth } of routesWithPermission()) {
      if (id === 'users.deleteProject') continue;
      const headers: Record<string, string> = { cookie: outsider.cookie };
      if (auth === 'dashboard') headers['x-project-id'] = project.id;
      const res = await call(route, project.id, headers);
      const expected = auth === 'dashboard' ? '403 NOT_A_MEMBER' : '404 NOT_FOUND';
      if (`${res.status} ${res.body?.error?.code}` !== expected) wrong.push(`${id}: ${res.status} ${res.text}`);
    }
    expect(wrong).toEqual([]);
  }, 60_000);

  it("answers another project's secret key 404 on a route naming a project in the path", async () => {
    const other = await createProject(pigeon, outsider.cookie, 'Other');
    const wrong: string[] = [];
    for (const { id, route } of routesWithPermission().filter((r) => r.auth === 'project')) {
      const res = await call(route, project.id, { authorization: `Bearer ${other.secretKey}` });
      if (res.status !== 404 || res.body?.error?.code !== 'NOT_FOUND') wrong.push(`${id}: ${res.status} ${res.text}`);
    }
    expect(wrong).toEqual([]);
  });
});
