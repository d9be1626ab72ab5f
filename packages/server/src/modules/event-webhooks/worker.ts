import pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { queryRows, sql } from '../../db/query.js';
import { type AppDeps, nowOf } from '../../deps.js';
import { sendSystemMail } from '../../mail/system-mail.js';
import { createResolver } from '../domains/dns-check.js';
import { sendWebhook, type WebhookResult } from '../webhooks/index.js';
import { WEBHOOKS_CHANNEL } from './consumer.js';
import { signingSecrets } from './endpoints.js';
import { DISABLE_AFTER_MS, retryDelayMs } from './schedule.js';

interface ClaimedRow {
  id: string;
  webhook_id: string;
  endpoint_id: string;
  project_id: string;
  body: string;
  attempts: number;
  replay: boolean;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

export interface EventWebhookWorker {
  stop(graceMs: number): Promise<void>;
}

/**
 * Claims due deliveries (FOR UPDATE SKIP LOCKED), at most `endpointConcurrency` in flight per
 * endpoint and `limit` in all, each with what its attempt needs.
 */
function claimDue(deps: AppDeps, limit: number, now: Date) {
  const perEndpoint = deps.config.webhooks.endpointConcurrency;
  return queryRows<ClaimedRow>(
    deps.db.pool,
    sql`WITH due AS (
          SELECT m.id FROM webhook_endpoints e CROSS JOIN LATERAL (
            SELECT m.id FROM webhook_messages m
            WHERE m.endpoint_id = e.id AND m.status = 'PENDING' AND m.next_attempt_at <= ${now}::timestamptz
            ORDER BY m.next_attempt_at
            LIMIT greatest(0, ${perEndpoint}::int - (SELECT count(*) FROM webhook_messages s
                                                     WHERE s.endpoint_id = e.id AND s.status = 'SENDING'))
            FOR UPDATE OF m SKIP LOCKED
          ) m
          WHERE e.enabled
          LIMIT ${limit}::int
        ), claimed AS (
          UPDATE webhook_messages m SET status = 'SENDING', claimed_at = ${now}::timestamptz, attempts = m.attempts + 1
          FROM due WHERE m.id = due.id
          RETURNING m.id, m.webhook_id, m.endpoint_id, m.project_id, m.payload::text AS body, m.attempts, m.replay
        )
        SELECT c.*, e.url, e.secret, e.previous_secret, e.previous_secret_expires_at
        FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id`,
  );
}

/** A claim older than the claim timeout belongs to a dead worker: due again, with the same webhook-id. */
async function reclaimStale(deps: AppDeps, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - deps.config.webhooks.claimTimeoutSeconds * 1000);
  await queryRows(
    deps.db.pool,
    sql`UPDATE webhook_messages SET status = 'PENDING', claimed_at = NULL, next_attempt_at = ${now}::timestamptz
        WHERE status = 'SENDING' AND claimed_at < ${cutoff}::timestamptz`,
  );
}

/**
 * Records one attempt and what follows in one statement: the attempt row, the delivery's state
 * (SUCCEEDED; PENDING at its next time; FAILED after the last attempt) and the endpoint's failure
 * clock (cleared by a success, started by the first failure). Returns the endpoint's state.
 */
async function recordAttempt(deps: AppDeps, row: ClaimedRow, result: WebhookResult, at: Date) {
  const ok = result.outcome === 'success';
  const delay = ok ? null : retryDelayMs(row.attempts);
  const status = ok ? 'SUCCEEDED' : delay === null ? 'FAILED' : 'PENDING';
  const next = delay === null ? null : new Date(at.getTime() + delay);
  const [endpoint] = await queryRows<{ failing_since: Date | null; enabled: boolean }>(
    deps.db.pool,
    sql`WITH attempt AS (
          INSERT INTO webhook_attempts (id, message_id, at, trigger, status_code, duration_ms, response, error)
          VALUES (${uuidv7()}::uuid, ${row.id}::uuid, ${at}::timestamptz, ${row.replay ? 'REPLAY' : 'SCHEDULED'},
                  ${result.statusCode}::int, ${Math.round(result.durationMs)}::int, ${result.responseBody}, ${result.error})
        ), message AS (
          UPDATE webhook_messages SET status = ${status}, next_attempt_at = ${next}::timestamptz, claimed_at = NULL, replay = false
          WHERE id = ${row.id}::uuid AND status = 'SENDING'
        )
        UPDATE webhook_endpoints SET failing_since = CASE WHEN ${ok} THEN NULL ELSE coalesce(failing_since, ${at}::timestamptz) END
        WHERE id = ${row.endpoint_id}::uuid
        RETURNING failing_since, enabled`,
  );
  if (
    !ok &&
    endpoint?.enabled &&
    endpoint.failing_since &&
    at.getTime() - endpoint.failing_since.getTime() >= DISABLE_AFTER_MS
  ) {
    await disableEndpoint(deps, row, endpoint.failing_since, at);
  }
}

/** Five days of failures: the endpoint stops receiving and the project's owners are told why. */
async function disableEndpoint(deps: AppDeps, row: ClaimedRow, since: Date, at: Date): Promise<void> {
  const reason = `Every attempt failed since ${since.toISOString()} (5 days); the last: ${row.url}`;
  const [disabled] = await queryRows<{ name: string }>(
    deps.db.pool,
    sql`UPDATE webhook_endpoints e SET enabled = false, disabled_reason = ${reason}, updated_at = ${at}::timestamptz
        FROM projects p WHERE e.id = ${row.endpoint_id}::uuid AND e.enabled AND p.id = e.project_id
        RETURNING p.name`,
  );
  if (!disabled) return; // another worker did it (and told the owners)
  deps.logger.warn(
    { endpointId: row.endpoint_id, projectId: row.project_id },
    'webhook endpoint disabled after 5 days of failures',
  );
  const owners = await queryRows<{ email: string }>(
    deps.db.pool,
    sql`SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.project_id = ${row.project_id}::uuid AND m.role = 'OWNER'`,
  );
  for (const owner of owners) {
    await sendSystemMail(deps, owner.email, `A webhook endpoint of ${disabled.name} was disabled`, [
      `Pigeon disabled the webhook endpoint ${row.url} of the project "${disabled.name}": every delivery to it has failed since ${since.toISOString()}.`,
      'Its deliveries and their attempts (status codes, answers, errors) are listed under GET /webhook-endpoints/:id/deliveries.',
      'Fix the receiver, then enable the endpoint again (PATCH /webhook-endpoints/:id with {"enabled": true}); pending deliveries resume and failed ones can be replayed.',
      `Endpoint id: ${row.endpoint_id}`,
    ]).catch((err) => deps.logger.error({ err }, 'could not tell an owner about a disabled webhook endpoint'));
  }
}

/**
 * The event webhook workers of one process: a claim loop keeps up to `concurrency` attempts in
 * flight (at most `endpointConcurrency` per endpoint, so a slow or silent endpoint holds a bounded
 * share and times out after `timeoutMs`), each recorded as it ends. Woken by NOTIFY when the
 * consumer queues deliveries and whenever an attempt ends.
 */
export async function startEventWebhooks(deps: AppDeps): Promise<EventWebhookWorker> {
  const cfg = deps.config.webhooks;
  const logger = deps.logger.child({ component: 'event-webhooks' });
  const resolver = createResolver(deps.config.dns.servers);
  let running = true;
  let wake: (() => void) | undefined;
  /** Set by every wake-up, so one that arrives during a claim is not lost. */
  let signalled = false;
  const wakeUp = () => {
    signalled = true;
    wake?.();
  };
  const inFlight = new Set<Promise<void>>();

  const listener = new pg.Client({ connectionString: deps.db.url });
  listener.on('error', (err) => logger.warn({ err }, 'event webhooks LISTEN connection error'));
  listener.on('notification', wakeUp);
  await listener.connect();
  await listener.query(`LISTEN ${WEBHOOKS_CHANNEL}`);

  const attempt = async (row: ClaimedRow) => {
    const at = nowOf(deps);
    const result = await sendWebhook({
      url: row.url,
      body: row.body,
      webhookId: row.webhook_id,
      secrets: signingSecrets(row, at),
      timeoutMs: cfg.timeoutMs,
      allowPrivateNetworks: cfg.allowPrivateNetworks,
      resolver,
      now: () => nowOf(deps),
    });
    await recordAttempt(deps, row, result, at);
  };

  const track = (row: ClaimedRow) => {
    const p: Promise<void> = attempt(row)
      .catch((err) => logger.error({ err, deliveryId: row.id }, 'webhook attempt not recorded; the claim times out'))
      .finally(() => {
        inFlight.delete(p);
        wakeUp();
      });
    inFlight.add(p);
  };

  let lastReclaim = 0;
  const loop = async () => {
    while (running) {
      signalled = false;
      try {
        const now = nowOf(deps);
        if (Date.now() - lastReclaim >= 1000) {
          lastReclaim = Date.now();
          await reclaimStale(deps, now);
        }
        const free = cfg.concurrency - inFlight.size;
        const rows = free > 0 ? await claimDue(deps, free, now) : [];
        for (const row of rows) track(row);
        if (rows.length > 0 && rows.length === free) continue;
      } catch (err) {
        logger.error({ err }, 'event webhooks loop error');
      }
      if (!running) break;
      if (signalled) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, cfg.pollMs);
        function done() {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        }
        wake = done;
      });
    }
  };
  const looping = loop();

  return {
    async stop(graceMs) {
      running = false;
      wakeUp();
      await looping;
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => setTimeout(r, graceMs))]);
      await listener.end().catch(() => {});
    },
  };
}
