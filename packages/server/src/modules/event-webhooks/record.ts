import type { WebhookDeliveryStatus } from '@pigeon/contract';
import { oneInFlight } from '../../db/one-in-flight.js';
import { preparedRows, queryRows, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { sendSystemMail } from '../../mail/system-mail.js';
import type { WebhookResult } from '../webhooks/public.js';
import { DISABLE_AFTER_MS, retryDelayMs } from './schedule.js';

/** One delivery as an attempt needs it (a claimed row, or one the change feed's batch is about to write). */
export interface DeliveryRow {
  id: string;
  webhook_id: string;
  endpoint_id: string;
  project_id: string;
  body: string;
  /** Attempts counted so far, this one included. */
  attempts: number;
  replay: boolean;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

export interface Outcome {
  row: DeliveryRow;
  result: WebhookResult;
  at: Date;
}

/** Attempts kept in a delivery's `attempt_log`, newest first (10 scheduled ones at most, plus replays). */
export const ATTEMPTS_KEPT = 20;

/**
 * What an ended attempt makes of its delivery: SUCCEEDED; PENDING at its next time; FAILED after
 * the last attempt, or at once when Pigeon refused to call the URL (the SSRF guard: a retry would be refused too).
 */
export function stateAfter({ row, result, at }: Outcome): { status: WebhookDeliveryStatus; next: string | null } {
  const ok = result.outcome === 'success';
  const delay = ok || result.refused ? null : retryDelayMs(row.attempts);
  return {
    status: ok ? 'SUCCEEDED' : delay === null ? 'FAILED' : 'PENDING',
    next: delay === null ? null : new Date(at.getTime() + delay).toISOString(),
  };
}

/** The attempt as its delivery's `attempt_log` keeps it (JSON). */
export const attemptEntry = ({ row, result, at }: Outcome): string =>
  JSON.stringify({
    at: at.toISOString(),
    trigger: row.replay ? 'REPLAY' : 'SCHEDULED',
    status_code: result.statusCode,
    duration_ms: Math.round(result.durationMs),
    response: result.responseBody,
    error: result.error,
  });

interface EndpointClock {
  ok: boolean;
  failedSince: Date | null;
  row: DeliveryRow;
  at: Date;
}

/** Per endpoint: did its latest attempt of `outcomes` succeed, and when did failing start since the last success. */
function endpointClocks(outcomes: Outcome[]): Map<string, EndpointClock> {
  const endpoints = new Map<string, EndpointClock>();
  for (const { row, result, at } of [...outcomes].sort((a, b) => a.at.getTime() - b.at.getTime())) {
    const ok = result.outcome === 'success';
    const known = endpoints.get(row.endpoint_id);
    endpoints.set(row.endpoint_id, { ok, failedSince: ok ? null : (known?.failedSince ?? at), row, at });
  }
  return endpoints;
}

/**
 * The update of the endpoints whose failure clock `outcomes` change (cleared when the latest
 * attempt succeeded, else started by the first failure), as the last statement of a CTE. An
 * endpoint still succeeding is not written: a burst costs no endpoint update.
 */
function clockUpdate(clocks: Map<string, EndpointClock>): Sql {
  const list = [...clocks.entries()];
  return sql`UPDATE webhook_endpoints e
    SET failing_since = CASE WHEN v.ok THEN NULL ELSE coalesce(e.failing_since, v.since) END
    FROM unnest(${list.map(([id]) => id)}::uuid[], ${list.map(([, e]) => e.ok)}::boolean[],
                ${list.map(([, e]) => e.failedSince?.toISOString() ?? null)}::timestamptz[]) AS v(id, ok, since)
    WHERE e.id = v.id AND NOT (v.ok AND e.failing_since IS NULL)
    RETURNING e.id, e.failing_since, e.enabled`;
}

interface ClockRow {
  id: string;
  failing_since: Date | null;
  enabled: boolean;
}

/**
 * Records the attempts that ended together in one statement: each delivery's row gets its
 * attempt (first in its log) and its state, and each endpoint whose failure clock changes gets it.
 * Endpoints failing for five days are disabled.
 */
export async function recordAttempts(deps: AppDeps, outcomes: Outcome[]): Promise<void> {
  const states = outcomes.map(stateAfter);
  const clocks = endpointClocks(outcomes);
  const updated = await preparedRows<ClockRow>(
    deps.db.pool,
    'webhooks.record',
    sql`WITH message AS (
          UPDATE webhook_messages m SET status = v.status, next_attempt_at = v.next, claimed_at = NULL, replay = false,
            attempt_log = (jsonb_build_array(v.attempt) || m.attempt_log) - ${ATTEMPTS_KEPT}::int
          FROM unnest(${outcomes.map((o) => o.row.id)}::uuid[], ${states.map((s) => s.status)}::text[],
                      ${states.map((s) => s.next)}::timestamptz[], ${outcomes.map(attemptEntry)}::jsonb[]) AS v(id, status, next, attempt)
          WHERE m.id = v.id AND m.status = 'SENDING'
        )
        ${clockUpdate(clocks)}`,
  );
  await disableFailing(deps, clocks, updated);
}

/** A delivery written by the change feed's batch, with its first attempt's outcome when it had one. */
export interface NewDelivery {
  row: DeliveryRow;
  eventId: string;
  eventType: string;
  /** 1 when it was attempted (ended or under way), 0 when not tried yet. */
  attempts: number;
  /** SUCCEEDED, PENDING (failed, or not tried), FAILED, or SENDING (still in flight: recorded when it ends). */
  status: WebhookDeliveryStatus;
  next: string | null;
  claimedAt: string | null;
  attempt: string | null;
}

/**
 * Writes the deliveries of a change-feed batch in one statement, in the batch's transaction:
 * each with the state its first attempt left (or PENDING, not tried yet, or SENDING, still in
 * flight), and the failure clocks their outcomes change. The caller disables endpoints afterwards
 * (`disableFailing`), once the transaction has committed.
 */
export async function insertDeliveries(
  db: Queryable,
  deliveries: NewDelivery[],
  outcomes: Outcome[],
  now: Date,
): Promise<{ clocks: Map<string, EndpointClock>; updated: ClockRow[] }> {
  const clocks = endpointClocks(outcomes);
  const updated = await preparedRows<ClockRow>(
    db,
    'webhooks.insert-batch',
    sql`WITH message AS (
          INSERT INTO webhook_messages (id, webhook_id, project_id, endpoint_id, event_id, event_type, payload,
                                        status, attempts, next_attempt_at, claimed_at, attempt_log, created_at)
          SELECT v.id, v.webhook_id, v.project_id, v.endpoint_id, v.event_id, v.event_type, v.payload, v.status, v.attempts,
                 v.next, v.claimed, CASE WHEN v.attempt IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(v.attempt) END,
                 ${now}::timestamptz
          FROM json_to_recordset(${`[${deliveries.map(deliveryJson).join(',')}]`}::json)
            AS v(id uuid, webhook_id text, project_id uuid, endpoint_id uuid, event_id uuid, event_type text,
                 status text, attempts int, next timestamptz, claimed timestamptz, payload jsonb, attempt jsonb)
          ON CONFLICT (endpoint_id, event_id) WHERE event_id IS NOT NULL DO NOTHING
        )
        ${clockUpdate(clocks)}`,
  );
  return { clocks, updated };
}

/**
 * A new delivery as one JSON object, its payload and attempt spliced in as the JSON they already
 * are: one document for the whole batch costs the process far less than a dozen array parameters
 * (each string element escaped on its own).
 */
function deliveryJson(d: NewDelivery): string {
  const fields = JSON.stringify({
    id: d.row.id,
    webhook_id: d.row.webhook_id,
    project_id: d.row.project_id,
    endpoint_id: d.row.endpoint_id,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempts: d.attempts,
    next: d.next,
    claimed: d.claimedAt,
  });
  return `${fields.slice(0, -1)},"payload":${d.row.body},"attempt":${d.attempt ?? 'null'}}`;
}

/** Disables the endpoints among `updated` whose attempts have all failed for five days. */
export async function disableFailing(
  deps: AppDeps,
  clocks: Map<string, EndpointClock>,
  updated: ClockRow[],
): Promise<void> {
  for (const endpoint of updated) {
    const last = clocks.get(endpoint.id);
    if (!last || last.ok || !endpoint.enabled || !endpoint.failing_since) continue;
    if (last.at.getTime() - endpoint.failing_since.getTime() >= DISABLE_AFTER_MS) {
      await disableEndpoint(deps, last.row, endpoint.failing_since, last.at);
    }
  }
}

/**
 * Writes outcomes in batches, one statement in flight (`oneInFlight`): the outcomes that arrive
 * while a statement runs go together in the next one, so a busy worker writes few statements and
 * an idle one writes each outcome at the end of its turn of the event loop.
 */
export function batchedRecorder(deps: AppDeps, onError: (err: unknown) => void): (outcome: Outcome) => Promise<void> {
  return oneInFlight<Outcome, void>(async (outcomes) => {
    await recordAttempts(deps, outcomes).catch(async (err) => {
      if (outcomes.length === 1) return onError(err);
      // One bad outcome must not leave the others unrecorded: each on its own.
      for (const outcome of outcomes) await recordAttempts(deps, [outcome]).catch(onError);
    }); // unrecorded: the claim times out and the delivery is attempted again
    return outcomes.map(() => undefined);
  });
}

/** Five days of failures: the endpoint stops receiving and the project's owners are told why. */
async function disableEndpoint(deps: AppDeps, row: DeliveryRow, since: Date, at: Date): Promise<void> {
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
