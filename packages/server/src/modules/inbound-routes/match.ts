import type { InboundRouteAction } from '@pigeon/contract';
import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

/** The route that takes an envelope recipient, with what receiving needs of its project. */
export interface RouteMatch {
  routeId: string;
  projectId: string;
  action: InboundRouteAction;
  /** The project's content retention: how long the message's content (and attachment links) last. */
  contentDays: number;
  address: string;
}

/**
 * The enabled route that takes `address`, or undefined (550 5.1.1). Only routes whose domain is a
 * verified domain of their project (or under one) count; the most specific pattern wins: the exact
 * local part, then the longest `prefix+*`, then `*`.
 */
export async function matchRecipient(db: Queryable, address: string): Promise<RouteMatch | undefined> {
  const at = address.lastIndexOf('@');
  if (at <= 0) return undefined;
  const local = address.slice(0, at).toLowerCase();
  const domain = address.slice(at + 1).toLowerCase();
  const [row] = await queryRows<{ id: string; project_id: string; action: InboundRouteAction; content_days: number }>(
    db,
    sql`SELECT r.id, r.project_id, r.action, p.retention_content_days AS content_days
        FROM inbound_routes r
        JOIN projects p ON p.id = r.project_id
        WHERE r.domain = ${domain} AND r.enabled
          AND (r.pattern = ${local} OR r.pattern = '*'
               OR (right(r.pattern, 2) = '+*' AND starts_with(${local}, left(r.pattern, -1))))
          AND EXISTS (SELECT 1 FROM domains d WHERE d.project_id = r.project_id AND d.verified_at IS NOT NULL
                        AND (r.domain = d.domain OR r.domain LIKE '%.' || d.domain))
        ORDER BY CASE WHEN r.pattern = ${local} THEN 0 WHEN r.pattern = '*' THEN 2 ELSE 1 END,
                 length(r.pattern) DESC, r.id
        LIMIT 1`,
  );
  if (!row) return undefined;
  return {
    routeId: row.id,
    projectId: row.project_id,
    action: row.action,
    contentDays: row.content_days,
    address: `${local}@${domain}`,
  };
}
