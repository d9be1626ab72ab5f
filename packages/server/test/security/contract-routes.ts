import { contract } from '@pigeon/contract';
import type { AppRoute } from '@ts-rest/core';
import type pg from 'pg';
import type { ZodTypeAny } from 'zod';

/** Every route of the contract, by its dotted name (`segments.create`). */
export function allRoutes(router: object = contract, prefix = ''): Array<[string, AppRoute]> {
  return Object.entries(router).flatMap(([name, value]) =>
    value && typeof value === 'object' && 'method' in value && 'path' in value
      ? [[`${prefix}${name}`, value as AppRoute] as [string, AppRoute]]
      : allRoutes(value as object, `${prefix}${name}.`),
  );
}

/** Field names a zod schema declares, through refinements, unions and optional wrappers. */
export function keysOf(schema: unknown): string[] {
  const def = (schema as { _def?: Record<string, unknown> } | undefined)?._def;
  if (!def) return [];
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  if (shape && typeof shape === 'object') return Object.keys(shape);
  for (const inner of ['schema', 'innerType', 'in', 'type']) {
    if (def[inner] && typeof def[inner] === 'object') return keysOf(def[inner]);
  }
  if (typeof def.getter === 'function') return keysOf((def.getter as () => ZodTypeAny)());
  if (Array.isArray(def.options)) return [...new Set((def.options as unknown[]).flatMap(keysOf))];
  if (def.left) return [...keysOf(def.left), ...keysOf(def.right)];
  return [];
}

export const fillPath = (path: string, value: (param: string) => string) =>
  path.replace(/:([A-Za-z]+)/g, (_m, param: string) => value(param));

/**
 * Fills a route's path with real ids (`ids.project`, `ids.user`, `ids.step`, and `ids.<first path
 * segment>` such as `ids.segments` for `:id`), so a probe reaches the route's work instead of a 404.
 * Anything without a real id gets a random UUID.
 */
export function realPath(path: string, ids: Record<string, string | undefined>): string {
  return fillPath(path, (param) => {
    if (param === 'id') {
      if (path.startsWith('/users/@me/projects/') || path.startsWith('/projects/')) return ids.project as string;
      return ids[path.split('/')[1] ?? ''] ?? crypto.randomUUID();
    }
    const named: Record<string, string | undefined> = {
      projectId: ids.project,
      userId: ids.user,
      contactId: ids.contacts,
      stepId: ids.step,
      field: 'plan',
      eventName: 'signup',
    };
    return named[param] ?? crypto.randomUUID();
  });
}

export const authOf = (route: AppRoute) => (route.metadata as { auth?: string } | undefined)?.auth ?? 'secret';

export const isWrite = (route: AppRoute) => route.method !== 'GET';

/** Status codes a route declares in the contract. */
export const declaredStatuses = (route: AppRoute) => Object.keys(route.responses).map(Number);

export const ROWS_TO_WATCH = [
  'users',
  'projects',
  'memberships',
  'invitations',
  'auth_tokens',
  'login_failures',
  'contacts',
  'events',
  'background_jobs',
  'idempotency_keys',
  'domains',
  'templates',
  'emails',
  'segments',
  'segment_members',
  'resource_refs',
  'contact_changes',
  'campaigns',
  'workflows',
  'workflow_steps',
  'workflow_transitions',
  'workflow_executions',
  'uploads',
];

/** An order-independent digest of every watched table's rows. */
export async function fingerprint(pool: pg.Pool): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const table of ROWS_TO_WATCH) {
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(md5(t::text), ',' ORDER BY md5(t::text)), '')) AS digest FROM ${table} t`,
    );
    out[table] = `${rows[0].n}:${rows[0].digest}`;
  }
  return out;
}

/** Tables whose rows differ between two fingerprints. */
export const changedTables = (before: Record<string, string>, after: Record<string, string>) =>
  ROWS_TO_WATCH.filter((t) => after[t] !== before[t]);
