import http from 'node:http';
import https from 'node:https';
import pg from 'pg';
import { preparedRows, queryRows, raw, type Sql, sql } from '../../db/query.js';
import { type AppDeps, nowOf } from '../../deps.js';
import { sendSystemMail } from '../../mail/system-mail.js';
import { createResolver } from '../domains/dns-check.js';
import { sendWebhook, type WebhookResult } from '../webhooks/service.js';
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

const JSON_BODY = { 'content-type': 'application/json' };

/** Deliveries claimed per endpoint (and per process) at most, as a multiple of the request concurrency. */
const CLAIM_AHEAD = 4;

export interface EventWebhookWorker {
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
  return queryRows<ClaimedRow>(
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

export interface Outcome {
  row: ClaimedRow;
  result: WebhookResult;
  at: Date;
}

/** Attempts kept in a delivery's `attempt_log`, newest first (10 scheduled ones at most, plus replays). */
export const ATTEMPTS_KEPT = 20;

/**
 * Records the attempts that ended together in one statement: each delivery's row gets its
 * attempt (first in its log) and its state (SUCCEEDED; PENDING at its next time; FAILED after the
 * last attempt), and each endpoint whose failure clock changes gets it (cleared when its latest
 * attempt succeeded, else started by its first failure). Returns the endpoints whose latest
 * attempt failed, with their failure clocks.
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
  const attempts = outcomes.map(({ row, result, at }) =>
    JSON.stringify({
      at: at.toISOString(),
      trigger: row.replay ? 'REPLAY' : 'SCHEDULED',
      status_code: result.statusCode,
      duration_ms: Math.round(result.durationMs),
      response: result.responseBody,
      error: result.error,
    }),
  );
  const updated = await preparedRows<{ id: string; failing_since: Date | null; enabled: boolean }>(
    deps.db.pool,
    'webhooks.record',
    sql`WITH message AS (
          UPDATE webhook_messages m SET status = v.status, next_attempt_at = v.next, claimed_at = NULL, replay = false,
            attempt_log = (jsonb_build_array(v.attempt) || m.attempt_log) - ${ATTEMPTS_KEPT}::int
          FROM unnest(${outcomes.map((o) => o.row.id)}::uuid[], ${states.map((s) => s.status)}::text[],
                      ${states.map((s) => s.next)}::timestamptz[], ${attempts}::jsonb[]) AS v(id, status, next, attempt)
          WHERE m.id = v.id AND m.status = 'SENDING'
        )
        -- An endpoint still succeeding is not written: a burst costs one row update per delivery.
        UPDATE webhook_endpoints e
        SET failing_since = CASE WHEN v.ok THEN NULL ELSE coalesce(e.failing_since, v.since) END
        FROM unnest(${list.map(([id]) => id)}::uuid[], ${list.map(([, e]) => e.ok)}::boolean[],
                    ${list.map(([, e]) => e.failedSince?.toISOString() ?? null)}::timestamptz[]) AS v(id, ok, since)
        WHERE e.id = v.id AND NOT (v.ok AND e.failing_since IS NULL)
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
  /** The last claim took all this process could hold: a finished delivery makes room for more. */
  let budgetBound = false;

  const attempt = async (row: ClaimedRow) => {
    const at = nowOf(deps);
    const result = await sendWebhook({
      url: row.url,
      body: row.body,
      headers: JSON_BODY, // the stored payload is JSON: no need to parse it to say so
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
          // Not a claim per finished delivery: only when this endpoint's queue runs short, or
          // when the last claim was cut short by this process's budget.
          if (queue.rows.length < cfg.endpointConcurrency || budgetBound) wakeUp();
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

  const loop = async () => {
    while (running) {
      signalled = false;
      try {
        const now = nowOf(deps);
        // Claimed ahead of the requests, so they never wait for the database (claim and record
        // statements take milliseconds, a loopback request less).
        const free = CLAIM_AHEAD * cfg.concurrency - held;
        const rows = free > 0 ? await claimDue(deps, free, now) : [];
        budgetBound = rows.length >= free;
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
