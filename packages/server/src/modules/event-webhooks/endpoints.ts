import { isIP } from 'node:net';
import { MAX_WEBHOOK_ENDPOINTS, type WebhookEndpoint } from '@pigeon/contract';
import { uuidv7 } from 'uuidv7';
import type { z } from 'zod';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { notFound, validationFailed } from '../../kit/errors.js';
import { forbiddenReason, generateWebhookSecret, isLoopbackName } from '../webhooks/public.js';

type Endpoint = z.infer<typeof WebhookEndpoint>;

export interface EndpointRow {
  id: string;
  project_id: string;
  url: string;
  description: string | null;
  event_types: string[];
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: Date | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface EndpointFields {
  url?: string;
  description?: string | null;
  eventTypes?: string[];
  enabled?: boolean;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

export function toEndpoint(row: EndpointRow, now: Date): Endpoint {
  const overlapping = row.previous_secret_expires_at && row.previous_secret_expires_at > now;
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: row.event_types,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    failingSince: iso(row.failing_since),
    secret: row.secret,
    previousSecretExpiresAt: overlapping ? iso(row.previous_secret_expires_at) : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/**
 * With the guard on, a URL whose host is a private IP literal is refused at once (422); a name is
 * checked at each attempt, after DNS, where a private answer is a recorded failed attempt.
 */
function checkUrl(deps: AppDeps, url: string | undefined): void {
  if (url === undefined || deps.config.webhooks.allowPrivateNetworks) return;
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  const reason = isIP(host) ? forbiddenReason(host) : isLoopbackName(host) ? 'a loopback address' : null;
  if (reason) {
    throw validationFailed([
      {
        field: 'url',
        message: `${host} is ${reason}: webhooks may only call public addresses unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true`,
        code: 'forbidden_address',
      },
    ]);
  }
}

export async function findEndpoint(db: Queryable, projectId: string, id: string): Promise<EndpointRow> {
  const [row] = await queryRows<EndpointRow>(
    db,
    sql`SELECT * FROM webhook_endpoints WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid`,
  );
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

export async function createEndpoint(
  deps: AppDeps,
  projectId: string,
  fields: Required<Pick<EndpointFields, 'url' | 'eventTypes'>> & EndpointFields,
) {
  checkUrl(deps, fields.url);
  const now = deps.clock.now();
  const row = await inTransaction(deps.db.pool, async (client) => {
    // Serialises creations per project, so the limit holds under concurrent requests.
    await queryRows(
      client,
      sql`SELECT pg_advisory_xact_lock(hashtext('webhook-endpoints'), hashtext(${projectId}::text))`,
    );
    const [count] = await queryRows<{ n: number }>(
      client,
      sql`SELECT count(*)::int AS n FROM webhook_endpoints WHERE project_id = ${projectId}::uuid`,
    );
    if ((count?.n ?? 0) >= MAX_WEBHOOK_ENDPOINTS) {
      throw validationFailed([
        {
          field: 'url',
          message: `A project has at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; delete one or widen the event types of another`,
          code: 'too_many_endpoints',
        },
      ]);
    }
    const [created] = await queryRows<EndpointRow>(
      client,
      sql`INSERT INTO webhook_endpoints (id, project_id, url, description, event_types, enabled, secret, created_at, updated_at)
          VALUES (${uuidv7()}::uuid, ${projectId}::uuid, ${fields.url}, ${fields.description ?? null}, ${fields.eventTypes}::text[],
                  ${fields.enabled ?? true}, ${generateWebhookSecret()}, ${now}, ${now})
          RETURNING *`,
    );
    return created as EndpointRow;
  });
  return toEndpoint(row, now);
}

export async function listEndpoints(deps: AppDeps, projectId: string) {
  const rows = await queryRows<EndpointRow>(
    deps.db.pool,
    sql`SELECT * FROM webhook_endpoints WHERE project_id = ${projectId}::uuid ORDER BY created_at, id`,
  );
  const now = deps.clock.now();
  return { data: rows.map((r) => toEndpoint(r, now)) };
}

export async function getEndpoint(deps: AppDeps, projectId: string, id: string) {
  return toEndpoint(await findEndpoint(deps.db.pool, projectId, id), deps.clock.now());
}

/** Enabling an endpoint again forgets what disabled it: the failure clock starts afresh. */
export async function updateEndpoint(deps: AppDeps, projectId: string, id: string, fields: EndpointFields) {
  checkUrl(deps, fields.url);
  const now = deps.clock.now();
  const [row] = await queryRows<EndpointRow>(
    deps.db.pool,
    sql`UPDATE webhook_endpoints SET
          url = coalesce(${fields.url ?? null}, url),
          description = CASE WHEN ${fields.description !== undefined} THEN ${fields.description ?? null} ELSE description END,
          event_types = coalesce(${fields.eventTypes ?? null}::text[], event_types),
          enabled = coalesce(${fields.enabled ?? null}::boolean, enabled),
          disabled_reason = CASE WHEN ${fields.enabled === true} THEN NULL ELSE disabled_reason END,
          failing_since = CASE WHEN ${fields.enabled === true} THEN NULL ELSE failing_since END,
          updated_at = ${now}
        WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid RETURNING *`,
  );
  if (!row) throw notFound('Webhook endpoint');
  return toEndpoint(row, now);
}

export async function deleteEndpoint(deps: AppDeps, projectId: string, id: string): Promise<void> {
  const rows = await queryRows(
    deps.db.pool,
    sql`DELETE FROM webhook_endpoints WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid RETURNING id`,
  );
  if (rows.length === 0) throw notFound('Webhook endpoint');
}

/** A new secret; the current one keeps signing (a second signature) for `overlapHours`. */
export async function rotateEndpointSecret(deps: AppDeps, projectId: string, id: string, overlapHours: number) {
  const now = deps.clock.now();
  const expires = new Date(now.getTime() + overlapHours * 3_600_000);
  const [row] = await queryRows<EndpointRow>(
    deps.db.pool,
    sql`UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = ${expires},
          secret = ${generateWebhookSecret()}, updated_at = ${now}
        WHERE id = ${id}::uuid AND project_id = ${projectId}::uuid RETURNING *`,
  );
  if (!row) throw notFound('Webhook endpoint');
  return toEndpoint(row, now);
}

/** The secrets an attempt signs with at `now`, newest first. */
export function signingSecrets(
  row: Pick<EndpointRow, 'secret' | 'previous_secret' | 'previous_secret_expires_at'>,
  now: Date,
) {
  const previous =
    row.previous_secret && row.previous_secret_expires_at && row.previous_secret_expires_at > now
      ? [row.previous_secret]
      : [];
  return [row.secret, ...previous];
}
