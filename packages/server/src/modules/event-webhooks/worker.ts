import { queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { AppDeps } from '../../deps.js';
import type { ListenHub } from '../../jobs/listen-hub.js';
import { startLoop } from '../../jobs/loop.js';
import type { FeedConsumer } from '../change-feed/public.js';
import { eventWebhooksConsumer, WEBHOOKS_CHANNEL } from './consumer.js';
import { batchedRecorder, type DeliveryRow } from './record.js';
import { createSender, type QueuedAttempt } from './sender.js';

/** Deliveries claimed per endpoint (and per process) at most, as a multiple of the request concurrency. */
const CLAIM_AHEAD = 4;

export interface EventWebhookWorker {
  /** The change feed's consumer that delivers through this worker's sender (`eventWebhooksConsumer`). */
  consumer: FeedConsumer;
  stop(graceMs: number): Promise<void>;
}

/**
 * Claims due deliveries (FOR UPDATE SKIP LOCKED) in one statement, each with what its attempt
 * needs. Per endpoint it looks at the window of its `CLAIM_AHEAD × endpointConcurrency` oldest
 * due deliveries (the due index holds PENDING and SENDING ones alike) and claims those not
 * already claimed, or claimed longer than the claim timeout ago (a dead worker's: due again, with
 * the same webhook-id). So an endpoint has at most a window of deliveries claimed over all
 * processes, a slow one included: the window's order (next_attempt_at, id) is one a claim does
 * not change, so claimed rows stay in it. The claim changes no indexed column (HOT when its page
 * has room).
 */
function claimDue(deps: AppDeps, limit: number, now: Date) {
  const { endpointConcurrency, claimTimeoutSeconds } = deps.config.webhooks;
  const stale = new Date(now.getTime() - claimTimeoutSeconds * 1000);
  const claimable = (m: Sql) => sql`(${m}.status = 'PENDING' OR ${m}.claimed_at < ${stale}::timestamptz)`;
  // Planned with its values at each call (one statement per claimed batch): a cached generic
  // plan would not know how few rows `now` and the window let through.
  return queryRows<DeliveryRow>(
    deps.db.pool,
    sql`WITH candidate AS (
          SELECT w.id FROM webhook_endpoints e CROSS JOIN LATERAL (
            SELECT m.id, m.status, m.claimed_at FROM webhook_messages m
            WHERE m.endpoint_id = e.id AND m.next_attempt_at <= ${now}::timestamptz
            ORDER BY m.next_attempt_at, m.id
            LIMIT ${CLAIM_AHEAD * endpointConcurrency}::int
          ) w
          WHERE e.enabled AND ${claimable(raw('w'))}
        ), due AS (
          SELECT m.id FROM webhook_messages m
          WHERE m.id = ANY(ARRAY(SELECT id FROM candidate)) AND ${claimable(raw('m'))} AND m.next_attempt_at <= ${now}::timestamptz
          LIMIT ${limit}::int
          FOR UPDATE SKIP LOCKED
        ), claimed AS (
          UPDATE webhook_messages m SET status = 'SENDING', claimed_at = ${now}::timestamptz, attempts = m.attempts + 1
          FROM due WHERE m.id = due.id
          RETURNING m.id, m.webhook_id, m.endpoint_id, m.project_id, m.payload::text AS body, m.attempts, m.replay
        )
        SELECT c.*, e.url, e.secret, e.previous_secret, e.previous_secret_expires_at
        FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id`,
  );
}

/**
 * The event webhook workers of one process: the change feed's consumer sends new deliveries
 * straight from its batches, and a loop (`jobs/loop.ts`) claims the due ones (retries, replays,
 * test events, deliveries the batches left), keeping up to `CLAIM_AHEAD × concurrency` claimed,
 * each recorded as it ends. Both go through one sender, at most `endpointConcurrency` requests per
 * endpoint. The loop is woken by NOTIFY when deliveries are left due, and as claimed ones end.
 */
export async function startEventWebhooks(deps: AppDeps, hub: ListenHub): Promise<EventWebhookWorker> {
  const cfg = deps.config.webhooks;
  const logger = deps.logger.child({ component: 'event-webhooks' });
  const sender = createSender(deps);
  const inFlight = new Set<Promise<void>>();
  const record = batchedRecorder(deps, (err) =>
    logger.error({ err }, 'webhook attempts not recorded; their claims time out'),
  );
  /** Rows this process claimed and has not recorded yet (queued, in flight or being recorded). */
  let held = 0;
  /** The last claim took all this process could hold: a finished delivery makes room for more. */
  let budgetBound = false;
  let wake = () => {};

  /** Records the attempt when it ends (unless cancelled before it started); stop waits for it. */
  const recordWhenOver = (attempt: QueuedAttempt, then?: () => void) => {
    const p: Promise<void> = attempt.outcome
      .then((outcome) => outcome && record(outcome))
      .catch((err) => logger.error({ err, deliveryId: attempt.row.id }, 'webhook attempt failed unexpectedly'))
      .finally(() => {
        inFlight.delete(p);
        then?.();
      });
    inFlight.add(p);
  };

  const track = (row: DeliveryRow) => {
    held++;
    recordWhenOver(sender.submit(row), () => {
      held--;
      // Not a claim per finished delivery: only when this endpoint's queue runs short, or
      // when the last claim was cut short by this process's budget.
      if (sender.waiting(row.endpoint_id) < cfg.endpointConcurrency || budgetBound) wake();
    });
  };

  /** The free part of the budget, claimed ahead of the requests so they never wait for the database. */
  const claim = async () => {
    const free = CLAIM_AHEAD * cfg.concurrency - held;
    budgetBound = free <= 0;
    if (free <= 0) return undefined;
    const rows = await claimDue(deps, free, deps.clock.now());
    budgetBound = rows.length >= free;
    return rows.length > 0 ? { rows, full: rows.length === free } : undefined;
  };

  const loop = await startLoop(hub, deps.logger, {
    name: 'event-webhooks',
    channels: [WEBHOOKS_CHANNEL],
    claim,
    handle: async ({ rows }) => rows.forEach(track),
    again: ({ full }) => full,
    idleMs: cfg.pollMs,
    errorPauseMs: cfg.pollMs,
    // Claimed but not started: due again at once, for this process after a restart or for another.
    // (The attempts of a feed batch that had not started are written PENDING by the batch: no row matches here.)
    async stopped(graceLeftMs) {
      const unstarted = sender.close().map((a) => a.row.id);
      if (unstarted.length > 0) {
        await queryRows(
          deps.db.pool,
          sql`UPDATE webhook_messages SET status = 'PENDING', claimed_at = NULL, attempts = attempts - 1
              WHERE id = ANY(${unstarted}::uuid[]) AND status = 'SENDING'`,
        ).catch((err) => logger.warn({ err }, 'claimed webhook deliveries not released; their claims time out'));
      }
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => setTimeout(r, graceLeftMs))]);
      sender.destroy();
    },
  });
  wake = loop.wake;
  return { consumer: eventWebhooksConsumer(sender, recordWhenOver), stop: loop.stop };
}
