import { type InboundRoute, type InboundRouteAction, MAX_INBOUND_ROUTES } from '@pigeon/contract';
import { uuidv7 } from 'uuidv7';
import type { z } from 'zod';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { conflict, notFound, validationFailed } from '../../kit/errors.js';

export interface RouteRow {
  id: string;
  project_id: string;
  domain: string;
  pattern: string;
  action: InboundRouteAction;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface RouteFields {
  domain?: string;
  pattern?: string;
  action?: InboundRouteAction;
  enabled?: boolean;
}

export const toRoute = (row: RouteRow): z.infer<typeof InboundRoute> => ({
  id: row.id,
  domain: row.domain,
  pattern: row.pattern,
  action: row.action,
  enabled: row.enabled,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** The route's domain must be one of the project's verified domains or a subdomain of one. */
async function checkDomain(db: Queryable, projectId: string, domain: string | undefined): Promise<void> {
  if (domain === undefined) return;
  const [verified] = await queryRows(
    db,
    sql`SELECT 1 FROM domains WHERE project_id = ${projectId}::uuid AND verified_at IS NOT NULL
          AND (domain = ${domain} OR ${domain} LIKE '%.' || domain)`,
  );
  if (!verified) {
    throw validationFailed([
      {
        field: 'domain',
        message: `${domain} is not a verified domain of this project (nor a subdomain of one): verify it under /domains first`,
        code: 'unverified_domain',
        received: domain,
      },
    ]);
  }
}

const taken = (err: unknown) => (err as { code?: string }).code === '23505';
const takenError = () => conflict('The project already has a route for this pattern at this domain');

export async function createRoute(
  deps: AppDeps,
  projectId: string,
  fields: Required<Omit<RouteFields, 'enabled'>> & RouteFields,
) {
  const now = deps.clock.now();
  const row = await inTransaction(deps.db.pool, async (client) => {
    await checkDomain(client, projectId, fields.domain);
    await queryRows(
      client,
      sql`SELECT pg_advisory_xact_lock(hashtext('inbound-routes'), hashtext(${projectId}::text))`,
    );
    const [count] = await queryRows<{ n: number }>(
      client,
      sql`SELECT count(*)::int AS n FROM inbound_routes WHERE project_id = ${projectId}::uuid`,
    );
    if ((count?.n ?? 0) >= MAX_INBOUND_ROUTES) {
      throw validationFailed([
        {
          field: 'pattern',
          message: `A project has at most ${MAX_INBOUND_ROUTES} inbound routes`,
          code: 'too_many_routes',
        },
      ]);
    }
    const [created] = await queryRows<RouteRow>(
      client,
      sql`INSERT INTO inbound_routes (id, project_id, domain, pattern, action, enabled, created_at, updated_at)
          VALUES (${uuidv7()}::uuid, ${projectId}::uuid, ${fields.domain}, ${fields.pattern}, ${fields.action},
                  ${fields.enabled ?? true}, ${now}, ${now})
          RETURNING *`,
    ).catch((err) => {
      throw taken(err) ? takenError() : err;
    });
    return created as RouteRow;
  });
  return toRoute(row);
}

export async function listRoutes(deps: AppDeps, projectId: string) {
  const rows = await queryRows<RouteRow>(
    deps.db.pool,
    sql`SELECT * FROM inbound_routes WHERE project_id = ${projectId}::uuid ORDER BY domain, pattern, id`,
  );
  return { data: rows.map(toRoute) };
}

export async function getRoute(deps: AppDeps, projectId: string, id: string) {
  const [row] = await queryRows<RouteRow>(
    deps.db.pool,
    sql`SELECT * FROM inbound_routes WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid`,
  );
  if (!row) throw notFound('Inbound route');
  return toRoute(row);
}

export async function updateRoute(deps: AppDeps, projectId: string, id: string, fields: RouteFields) {
  await checkDomain(deps.db.pool, projectId, fields.domain);
  const [row] = await queryRows<RouteRow>(
    deps.db.pool,
    sql`UPDATE inbound_routes SET
          domain = coalesce(${fields.domain ?? null}, domain),
          pattern = coalesce(${fields.pattern ?? null}, pattern),
          action = coalesce(${fields.action ?? null}, action),
          enabled = coalesce(${fields.enabled ?? null}::boolean, enabled),
          updated_at = ${deps.clock.now()}
        WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid RETURNING *`,
  ).catch((err) => {
    throw taken(err) ? takenError() : err;
  });
  if (!row) throw notFound('Inbound route');
  return toRoute(row);
}

export async function deleteRoute(deps: AppDeps, projectId: string, id: string): Promise<void> {
  const rows = await queryRows(
    deps.db.pool,
    sql`DELETE FROM inbound_routes WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid RETURNING id`,
  );
  if (rows.length === 0) throw notFound('Inbound route');
}
