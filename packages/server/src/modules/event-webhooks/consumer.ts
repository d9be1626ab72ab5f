import { preparedRows, raw, sql } from '../../db/query.js';
import { nowOf } from '../../deps.js';
import type { FeedConsumer } from '../change-feed/feed.js';
import { emailOfEvent, endpointWants, eventPayload } from './payload.js';

export const WEBHOOKS_CHANNEL = 'pigeon_webhooks_due';

/**
 * The change feed's event-webhook consumer: each recorded event (`email.*`, `contact.*`,
 * `segment.<slug>.entry/exit`, custom events) that some enabled endpoint of its project wants
 * becomes one delivery row per such endpoint, payload included, in the transaction that moves the
 * feed's cursor. A crash redoes the batch, and the unique (endpoint, event) index keeps one
 * delivery per event: at least once, never a second `webhook-id` for one event. `/v1/track` and
 * the mail delivery path do nothing for it.
 */
export const eventWebhooksConsumer: FeedConsumer = {
  name: 'webhooks.events',
  // Only events an enabled endpoint wants reach the process; a project without endpoints costs one index probe.
  wants: sql`ch.kind = 'event' AND EXISTS (
    SELECT 1 FROM webhook_endpoints w WHERE w.project_id = ch.project_id AND w.enabled AND ${endpointWants(raw('ch.name'))})`,
  async handle(client, changes, deps) {
    const ids = changes.flatMap((c) => (c.eventId ? [c.eventId] : []));
    if (ids.length === 0) return;
    const now = nowOf(deps);
    const rows = await preparedRows<{ n: number }>(
      client,
      'webhooks.enqueue-events',
      sql`WITH queued AS (
            INSERT INTO webhook_messages (id, webhook_id, project_id, endpoint_id, event_id, event_type, payload, next_attempt_at, created_at)
            SELECT uuidv7_compat(), 'msg_' || replace(uuidv7_compat()::text, '-', ''), e.project_id, w.id, e.id, e.name,
                   ${eventPayload}, ${now}::timestamptz, ${now}::timestamptz
            FROM events e
            JOIN contacts c ON c.id = e.contact_id
            JOIN webhook_endpoints w ON w.project_id = e.project_id AND w.enabled AND ${endpointWants(raw('e.name'))}
            LEFT JOIN emails em ON ${emailOfEvent}
            WHERE e.id = ANY(${ids}::uuid[])
            ORDER BY e.created_at, e.id
            ON CONFLICT (endpoint_id, event_id) WHERE event_id IS NOT NULL DO NOTHING
            RETURNING 1
          )
          SELECT count(*)::int AS n FROM queued`,
    );
    if ((rows[0]?.n ?? 0) > 0) await client.query(`SELECT pg_notify('${WEBHOOKS_CHANNEL}', '')`);
  },
};
