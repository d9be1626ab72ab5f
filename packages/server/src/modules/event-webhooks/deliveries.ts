import type {
  WebhookAttemptTrigger,
  WebhookDelivery,
  WebhookDeliveryStatus,
  WebhookEventPayload,
} from '@pigeon/contract';
import { uuidv7 } from 'uuidv7';
import type { z } from 'zod';
import { countUpToCap, LATER_PAGE } from '../../db/capped-count.js';
import { and, queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { AppDeps } from '../../deps.js';
import { decodeCursor, encodeCursor } from '../../kit/cursor.js';
import { conflict, notFound } from '../../kit/errors.js';
import { newWebhookId } from '../webhooks/public.js';
import { WEBHOOKS_CHANNEL } from './consumer.js';
import { findEndpoint } from './endpoints.js';

type Delivery = z.infer<typeof WebhookDelivery>;

interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_type: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  created_at: Date;
  payload: WebhookEventPayload;
  attempt_log: Array<{
    at: string;
    trigger: WebhookAttemptTrigger;
    status_code: number | null;
    duration_ms: number;
    response: string | null;
    error: string | null;
  }>;
}

const toDelivery = (r: DeliveryRow): Delivery => ({
  id: r.id,
  webhookId: r.webhook_id,
  eventType: r.event_type,
  status: r.status,
  attemptCount: r.attempts,
  nextAttemptAt: r.status === 'PENDING' ? (r.next_attempt_at?.toISOString() ?? null) : null,
  createdAt: r.created_at.toISOString(),
  payload: r.payload,
  attempts: r.attempt_log.map((a) => ({
    at: new Date(a.at).toISOString(),
    trigger: a.trigger,
    statusCode: a.status_code,
    durationMs: a.duration_ms,
    response: a.response,
    error: a.error,
  })),
});

/** Deliveries of one endpoint matching `where`, each with its newest attempts (kept in its row). */
function selectDeliveries(where: Sql, limit: number) {
  return sql`SELECT m.id, m.webhook_id, m.event_type, m.status, m.attempts, m.next_attempt_at, m.created_at, m.payload, m.attempt_log
    FROM webhook_messages m WHERE ${where}
    ORDER BY m.created_at DESC, m.id DESC LIMIT ${limit}::int`;
}

export async function listDeliveries(
  deps: AppDeps,
  projectId: string,
  endpointId: string,
  query: { limit: number; cursor?: string; status?: WebhookDeliveryStatus; eventType?: string },
) {
  await findEndpoint(deps.db.pool, projectId, endpointId);
  const filters = [sql`m.endpoint_id = ${endpointId}::uuid`];
  if (query.status) filters.push(sql`m.status = ${query.status}`);
  if (query.eventType) filters.push(sql`m.event_type = ${query.eventType}`);
  const base = and(filters);
  const page = [...filters];
  if (query.cursor) {
    const c = decodeCursor(query.cursor);
    page.push(sql`(m.created_at, m.id) < (${c.v}::timestamptz, ${c.id}::uuid)`);
  }
  const [rows, counted] = await Promise.all([
    queryRows<DeliveryRow>(deps.db.pool, selectDeliveries(and(page), query.limit + 1)),
    query.cursor ? LATER_PAGE : countUpToCap(deps.db.pool, raw('webhook_messages m'), base),
  ]);
  const hasMore = rows.length > query.limit;
  const data = rows.slice(0, query.limit).map(toDelivery);
  const last = data.at(-1);
  return {
    data,
    cursor: hasMore && last ? encodeCursor({ v: last.createdAt, id: last.id }) : null,
    hasMore,
    ...counted,
  };
}

async function findDelivery(deps: AppDeps, projectId: string, endpointId: string, id: string): Promise<Delivery> {
  const [row] = await queryRows<DeliveryRow>(
    deps.db.pool,
    selectDeliveries(
      sql`m.id = ${id}::uuid AND m.endpoint_id = ${endpointId}::uuid AND m.project_id = ${projectId}::uuid`,
      1,
    ),
  );
  if (!row) throw notFound('Webhook delivery');
  return toDelivery(row);
}

export const getDelivery = findDelivery;

/** Replays and recoveries need an enabled endpoint (a disabled one would hold them). */
export const requireEnabled = (endpoint: { enabled: boolean }) => {
  if (!endpoint.enabled) throw conflict('The endpoint is disabled: enable it first (PATCH with {"enabled": true})');
};

/** Due now, as a REPLAY attempt, with the same webhook-id and payload. */
export async function replayDelivery(deps: AppDeps, projectId: string, endpointId: string, id: string) {
  requireEnabled(await findEndpoint(deps.db.pool, projectId, endpointId));
  const now = deps.clock.now();
  // A claim past its timeout is a dead worker's (the claim statement takes it back): replayable.
  const stale = new Date(now.getTime() - deps.config.webhooks.claimTimeoutSeconds * 1000);
  const updated = await queryRows(
    deps.db.pool,
    sql`WITH replayed AS (
          UPDATE webhook_messages SET status = 'PENDING', replay = true, next_attempt_at = ${now}::timestamptz, claimed_at = NULL
          WHERE id = ${id}::uuid AND endpoint_id = ${endpointId}::uuid AND project_id = ${projectId}::uuid
            AND (status <> 'SENDING' OR claimed_at < ${stale}::timestamptz)
          RETURNING id
        ) SELECT id, pg_notify(${WEBHOOKS_CHANNEL}, '') FROM replayed`,
  );
  if (updated.length === 0) {
    await findDelivery(deps, projectId, endpointId, id); // 404 when it is not there
    throw conflict('The delivery is being attempted right now; replay it once the attempt ends');
  }
  return findDelivery(deps, projectId, endpointId, id);
}

/** A `webhook.test` event queued for this endpoint alone, whatever its filters. */
export async function sendTestEvent(deps: AppDeps, projectId: string, endpointId: string) {
  requireEnabled(await findEndpoint(deps.db.pool, projectId, endpointId));
  const now = deps.clock.now();
  const id = uuidv7();
  const payload = {
    type: 'webhook.test',
    timestamp: now.toISOString(),
    data: { endpointId, message: 'A test event from Pigeon: your endpoint is reachable and can verify signatures' },
  };
  await queryRows(
    deps.db.pool,
    sql`WITH queued AS (
          INSERT INTO webhook_messages (id, webhook_id, project_id, endpoint_id, event_type, payload, next_attempt_at, created_at)
          VALUES (${id}::uuid, ${newWebhookId()}, ${projectId}::uuid, ${endpointId}::uuid, 'webhook.test', ${JSON.stringify(payload)}::jsonb,
                  ${now}::timestamptz, ${now}::timestamptz)
          RETURNING id
        ) SELECT pg_notify(${WEBHOOKS_CHANNEL}, '') FROM queued`,
  );
  return findDelivery(deps, projectId, endpointId, id);
}
