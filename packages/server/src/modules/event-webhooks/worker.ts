import http from 'node:http';
import https from 'node:https';
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

/** Deliveries claimed per endpoint (and per process) at most, as a multiple of the request concurrency. */
const CLAIM_AHEAD = 4;

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
            LIMIT greatest(0, ${CLAIM_AHEAD * perEndpoint}::int - (SELECT count(*) FROM webhook_messages s
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

export interface Outcome {
  row: ClaimedRow;
  result: WebhookResult;
  at: Date;
}

/**
 * Records the attempts that ended together in one statement: the attempt rows, each delivery's
 * state (SUCCEEDED; PENDING at its next time; FAILED after the last attempt) and each endpoint's
 * failure clock (cleared when its latest attempt succeeded, else started by its first failure).
 * Returns the endpoints whose latest attempt failed, with their failure clocks.
 */
async function recordAttempts(deps: AppDeps, outcomes: Outcome[]) {
  const states = outcomes.map(({ row, result, at }) => {
    const ok = result.outcome === 'success';
    const delay = ok ? null : retryDelayMs(row.attempts);
    return {
      status: ok ? 'SUCCEEDED' : delay === null ? 'FAILED' : 'PENDING',
      next: delay === null ? null : new Date(at.getTime() + delay).toISOString(),
    };
  });
  // Per endpoint: did its latest attempt of the batch succeed, and when did failing start since the last success.
  const endpoints = new Map<string, { ok: boolean; failedSince: Date | null; row: ClaimedRow; at: Date }>();
  for (const { row, result, at } of [...outcomes].sort((a, b) => a.at.getTime() - b.at.getTime())) {
    const ok = result.outcome === 'success';
    const known = endpoints.get(row.endpoint_id);
    const failedSince = ok ? null : (known?.failedSince ?? at);
    endpoints.set(row.endpoint_id, { ok, failedSince, row, at });
  }
  const list = [...endpoints.entries()];
  const column = <T>(f: (o: Outcome, i: number) => T) => outcomes.map(f);
  const updated = await queryRows<{ id: string; failing_since: Date | null; enabled: boolean }>(
    deps.db.pool,
    sql`WITH attempt AS (
          INSERT INTO webhook_attempts (id, message_id, at, trigger, status_code, duration_ms, response, error)
          SELECT v.* FROM unnest(${column(() => uuidv7())}::uuid[], ${column((o) => o.row.id)}::uuid[],
                               ${column((o) => o.at.toISOString())}::timestamptz[],
                               ${column((o) => (o.row.replay ? 'REPLAY' : 'SCHEDULED'))}::text[],
                               ${column((o) => o.result.statusCode)}::int[], ${column((o) => Math.round(o.result.durationMs))}::int[],
                               ${column((o) => o.result.responseBody)}::text[], ${column((o) => o.result.error)}::text[])
            AS v(id, message_id, at, trigger, status_code, duration_ms, response, error)
          -- A delivery whose endpoint was deleted meanwhile is gone, and so is its attempt.
          WHERE EXISTS (SELECT 1 FROM webhook_messages m WHERE m.id = v.message_id)
        ), message AS (
          UPDATE webhook_messages m SET status = v.status, next_attempt_at = v.next, claimed_at = NULL, replay = false
          FROM unnest(${column((o) => o.row.id)}::uuid[], ${states.map((s) => s.status)}::text[],
                      ${states.map((s) => s.next)}::timestamptz[]) AS v(id, status, next)
          WHERE m.id = v.id AND m.status = 'SENDING'
        )
        UPDATE webhook_endpoints e
        SET failing_since = CASE WHEN v.ok THEN NULL ELSE coalesce(e.failing_since, v.since) END
        FROM unnest(${list.map(([id]) => id)}::uuid[], ${list.map(([, e]) => e.ok)}::boolean[],
                    ${list.map(([, e]) => e.failedSince?.toISOString() ?? null)}::timestamptz[]) AS v(id, ok, since)
        WHERE e.id = v.id
        RETURNING e.id, e.failing_since, e.enabled`,
  );
  for (const endpoint of updated) {
    const last = endpoints.get(endpoint.id);
    if (!last || last.ok || !endpoint.enabled || !endpoint.failing_since) continue;
    if (last.at.getTime() - endpoint.failing_since.getTime() >= DISABLE_AFTER_MS) {
      await disableEndpoint(deps, last.row, endpoint.failing_since, last.at);
    }
  }
}

/**
 * Writes outcomes in batches, one statement at a time: the outcomes that arrive while a statement
 * runs go together in the next one, so a busy worker writes few statements and an idle one
 * writes each outcome at once.
 */
function batchedRecorder(deps: AppDeps, onError: (err: unknown) => void) {
  let waiting: Array<{ outcome: Outcome; done: () => void }> = [];
  let flushing = false;
  const flush = async () => {
    flushing = true;
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      const outcomes = batch.map((w) => w.outcome);
      await recordAttempts(deps, outcomes).catch(async (err) => {
        if (outcomes.length === 1) return onError(err);
        // One bad outcome must not leave the others unrecorded: each on its own.
        for (const outcome of outcomes) await recordAttempts(deps, [outcome]).catch(onError);
      }); // unrecorded: the claim times out and the delivery is attempted again
      for (const w of batch) w.done();
    }
    flushing = false;
  };
  return (outcome: Outcome) =>
    new Promise<void>((done) => {
      waiting.push({ outcome, done });
      if (!flushing) void flush();
    });
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
  // Connections are kept per vetted address (the agent's key is the address Pigeon connects to, not
  // the name): a burst to one endpoint does not open a connection per delivery.
  const agentOptions = {
    keepAlive: true,
    maxSockets: cfg.endpointConcurrency,
    maxFreeSockets: cfg.endpointConcurrency,
  };
  const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
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

  const record = batchedRecorder(deps, (err) =>
    logger.error({ err }, 'webhook attempts not recorded; their claims time out'),
  );
  /** Rows this process claimed and has not recorded yet (queued, in flight or being recorded). */
  let held = 0;
  const queues = new Map<string, { active: number; rows: ClaimedRow[] }>();

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
      agents,
    });
    return { row, result, at };
  };

  /** Starts the endpoint's queued rows while it has fewer than `endpointConcurrency` requests open. */
  const pump = (endpointId: string) => {
    const queue = queues.get(endpointId);
    if (!queue) return;
    while (running && queue.active < cfg.endpointConcurrency && queue.rows.length > 0) {
      const row = queue.rows.shift() as ClaimedRow;
      queue.active++;
      const p: Promise<void> = attempt(row)
        .then((outcome) => {
          // The request is over: the endpoint's slot goes to the next row while this one is recorded.
          queue.active--;
          pump(endpointId);
          return record(outcome);
        })
        .catch((err) => logger.error({ err, deliveryId: row.id }, 'webhook attempt failed unexpectedly'))
        .finally(() => {
          inFlight.delete(p);
          held--;
          if (queue.active === 0 && queue.rows.length === 0 && queues.get(endpointId) === queue)
            queues.delete(endpointId);
          wakeUp();
        });
      inFlight.add(p);
    }
  };

  const track = (row: ClaimedRow) => {
    held++;
    const queue = queues.get(row.endpoint_id) ?? { active: 0, rows: [] };
    queues.set(row.endpoint_id, queue);
    queue.rows.push(row);
    pump(row.endpoint_id);
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
        // Claimed ahead of the requests, so they never wait for the database (claim and record
        // statements take milliseconds, a loopback request less).
        const free = CLAIM_AHEAD * cfg.concurrency - held;
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
      // Claimed but not started: due again at once, for this process after a restart or for another.
      const unstarted = [...queues.values()].flatMap((q) => q.rows.splice(0).map((r) => r.id));
      if (unstarted.length > 0) {
        await queryRows(
          deps.db.pool,
          sql`UPDATE webhook_messages SET status = 'PENDING', claimed_at = NULL, attempts = attempts - 1
              WHERE id = ANY(${unstarted}::uuid[]) AND status = 'SENDING'`,
        ).catch((err) => logger.warn({ err }, 'claimed webhook deliveries not released; their claims time out'));
      }
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => setTimeout(r, graceMs))]);
      await listener.end().catch(() => {});
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
