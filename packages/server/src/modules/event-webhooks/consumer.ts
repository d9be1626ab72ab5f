import { raw, sql } from '../../db/query.js';
import type { FeedConsumer } from '../change-feed/public.js';
import { deliverBatch } from './direct.js';
import { endpointWants } from './payload.js';
import { disableFailing } from './record.js';
import type { QueuedAttempt, Sender } from './sender.js';

export const WEBHOOKS_CHANNEL = 'pigeon_webhooks_due';
export const EVENT_WEBHOOKS_CONSUMER = 'webhooks.events';

/**
 * The change feed's event-webhook consumer: each recorded event (`email.*`, `contact.*`,
 * `segment.<slug>.entry/exit`, custom events) that some enabled endpoint of its project wants
 * becomes one delivery per such endpoint, attempted at once and written with its outcome in the
 * transaction that moves the feed's cursor (`deliverBatch`). A crash redoes the batch with the
 * same webhook-ids, and the unique (endpoint, event) index keeps one delivery row per event: at
 * least once, never a second `webhook-id` for one event. `/v1/track` and the mail delivery path
 * do nothing for it.
 */
export function eventWebhooksConsumer(sender: Sender, recordWhenOver: (attempt: QueuedAttempt) => void): FeedConsumer {
  return {
    name: EVENT_WEBHOOKS_CONSUMER,
    // Only events an enabled endpoint wants reach the process; a project without endpoints costs one index probe.
    wants: sql`ch.kind = 'event' AND EXISTS (
      SELECT 1 FROM webhook_endpoints w WHERE w.project_id = ch.project_id AND w.enabled AND ${endpointWants(raw('ch.name'))})`,
    async handle(client, changes, deps) {
      const eventIds = changes.flatMap((c) => (c.eventId ? [c.eventId] : []));
      if (eventIds.length === 0) return;
      const batch = await deliverBatch(client, { sender, eventIds, now: deps.clock.now() });
      // Deliveries left for the claim loop: wake it (NOTIFY is delivered at commit).
      if (batch.pending) await client.query(`SELECT pg_notify('${WEBHOOKS_CHANNEL}', '')`);
      return () => {
        for (const attempt of batch.underWay) recordWhenOver(attempt);
        for (const { clocks, updated } of batch.written) {
          void disableFailing(deps, clocks, updated).catch((err) =>
            deps.logger.error({ err }, 'could not disable a failing webhook endpoint'),
          );
        }
      };
    },
  };
}
