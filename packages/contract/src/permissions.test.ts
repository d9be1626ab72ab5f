import { describe, expect, it } from 'vitest';
import { contract, namedSchemas } from './index.js';
import type { RouteMeta } from './meta.js';
import { buildOpenApiDocument, flattenRoutes } from './openapi.js';
import { ACCOUNT, PERMISSIONS, Permission } from './permissions.js';

const routes = flattenRoutes(contract).map(({ id, route }) => ({
  id,
  route,
  meta: (route.metadata ?? {}) as Partial<RouteMeta>,
}));
const SIGNED_IN = new Set(['session', 'dashboard', 'project']);

describe('route permissions', () => {
  it('names a permission of the table on every route a signed-in user can reach, and on no other', () => {
    for (const { id, meta } of routes) {
      if (!SIGNED_IN.has(meta.auth ?? 'secret')) {
        expect(meta.permission, id).toBeUndefined();
        continue;
      }
      const allowed: string[] = meta.auth === 'session' ? [...Permission.options, ACCOUNT] : Permission.options;
      expect(allowed, `${id} (auth ${meta.auth}) names no permission of the table`).toContain(meta.permission);
    }
  });

  it('finds the project of a path-scoped route in `:id` of a /projects/ path', () => {
    for (const { id, route, meta } of routes) {
      const pathScoped = meta.auth === 'project' || (meta.auth === 'session' && meta.permission !== ACCOUNT);
      if (pathScoped) expect(route.path, id).toMatch(/\/projects\/:id(\/|$)/);
    }
  });

  it('gives every permission at least one role, and uses every permission', () => {
    for (const permission of Permission.options) {
      expect(PERMISSIONS[permission].length, permission).toBeGreaterThan(0);
      expect(
        routes.some((r) => r.meta.permission === permission),
        permission,
      ).toBe(true);
    }
  });

  it('shows the permission and its roles on each OpenAPI operation', () => {
    const document = buildOpenApiDocument(contract, namedSchemas, { title: 'Pigeon', version: 'test' });
    for (const { id, route, meta } of routes) {
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const op = (document.paths?.[path] as Record<string, Record<string, unknown>> | undefined)?.[
        route.method.toLowerCase()
      ];
      const permission = meta.permission === ACCOUNT ? undefined : meta.permission;
      if (!permission) {
        expect(op?.['x-pigeon-permission'], id).toBeUndefined();
        continue;
      }
      expect(op?.['x-pigeon-permission'], id).toEqual({ name: permission, roles: [...PERMISSIONS[permission]] });
      expect(op?.description, id).toContain(`Permission: \`${permission}\``);
    }
  });
});
