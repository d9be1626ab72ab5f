import { preparedRows, raw, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { emailOfEvent, endpointWants, eventPayload } from './payload.js';
import { attemptEntry, type DeliveryRow, insertDeliveries, type NewDelivery, stateAfter } from './record.js';
import type { QueuedAttempt, Sender } from './sender.js';

/** An endpoint with requests open and none ended for this long is left out of the rest of the batch. */
export const STALL_MS = 500;
/** A batch waits at most this long for its attempts; what is not over by then goes on without it. */
export const BATCH_BUDGET_MS = 5_000;
const TICK_MS = 50;

interface Candidate extends DeliveryRow {
  event_id: string;
  event_type: string;
  /** The endpoint's last attempt did not fail. */
  healthy: boolean;
}

/**
 * The deliveries the events `ids` make (one per enabled endpoint that wants the event), each with
 * its payload, a new row id and its `webhook-id`. The webhook-id is derived from the endpoint and
 * the event, so a batch redone after a crash sends the same one.
 */
function candidates(db: Queryable, ids: string[]) {
  return preparedRows<Candidate>(
    db,
    'webhooks.batch-candidates',
    sql`SELECT uuidv7_compat() AS id, 'msg_' || md5(w.id::text || ':' || e.id::text) AS webhook_id,
               e.project_id, w.id AS endpoint_id, e.id AS event_id, e.name AS event_type,
               ${eventPayload}::text AS body, 1 AS attempts, false AS replay,
               w.url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.failing_since IS NULL AS healthy
        FROM events e
        JOIN contacts c ON c.id = e.contact_id
        JOIN webhook_endpoints w ON w.project_id = e.project_id AND w.enabled AND ${endpointWants(raw('e.name'))}
        LEFT JOIN emails em ON ${emailOfEvent}
        WHERE e.id = ANY(${ids}::uuid[]) AND ${notForWorkflowsOnly}
        ORDER BY e.created_at, e.id`,
  );
}

/** Mail a WORKFLOW inbound route took is for workflows, not webhook endpoints (modules/inbound-routes). */
const notForWorkflowsOnly = raw(`NOT (e.name = 'email.received' AND e.data->>'action' = 'WORKFLOW')`);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Waits for a chunk's attempts to end, endpoint by endpoint: an endpoint is let go (its attempts
 * that have not started are cancelled, those under way go on without the batch) once it stalls
 * (`STALL_MS` without an answer), once the batch's `deadline` has passed, or when the process
 * stops. So a slow endpoint costs the batch at most `STALL_MS` beyond its own answers.
 */
async function settle(attempts: QueuedAttempt[], sender: Sender, deadline: number): Promise<void> {
  const open = new Map<string, Set<QueuedAttempt>>();
  for (const a of attempts) {
    const set = open.get(a.row.endpoint_id) ?? new Set();
    open.set(a.row.endpoint_id, set.add(a));
    void a.outcome.then(() => {
      set.delete(a);
      if (set.size === 0) open.delete(a.row.endpoint_id);
    });
  }
  const allOver = Promise.all(attempts.map((a) => a.outcome));
  while (open.size > 0) {
    await Promise.race([allOver, sleep(TICK_MS)]);
    const overBudget = performance.now() >= deadline;
    for (const [endpointId, set] of open) {
      if (!overBudget && !sender.closed && sender.stalledMs(endpointId) < STALL_MS) continue;
      for (const a of set) a.cancel();
      open.delete(endpointId);
    }
  }
}

/** What the attempt (or its absence) makes of a new delivery row. */
function newDelivery(c: Candidate, attempt: QueuedAttempt | undefined, now: Date): NewDelivery {
  const base = { row: c, eventId: c.event_id, eventType: c.event_type };
  const done = attempt?.done;
  if (done) {
    const { status, next } = stateAfter(done);
    return { ...base, attempts: 1, status, next, claimedAt: null, attempt: attemptEntry(done) };
  }
  const at = now.toISOString();
  // Under way: claimed by this process, recorded when it ends (or due again after the claim timeout).
  if (attempt?.started) return { ...base, attempts: 1, status: 'SENDING', next: at, claimedAt: at, attempt: null };
  return { ...base, attempts: 0, status: 'PENDING', next: at, claimedAt: null, attempt: null };
}

/** Events read per statement: a chunk's requests run while the next chunk is read and the last one written. */
const CHUNK_EVENTS = 256;

interface Chunk {
  rows: Candidate[];
  attempts: Array<QueuedAttempt | undefined>;
}

export interface DeliveredBatch {
  /** Some deliveries were left PENDING for the claim loop. */
  pending: boolean;
  /** Attempts still under way, written SENDING: to be recorded when they end, once the batch has committed. */
  underWay: QueuedAttempt[];
  /** The failure clocks the batch changed (`disableFailing`, once committed). */
  written: Array<Awaited<ReturnType<typeof insertDeliveries>>>;
}

/**
 * Delivers the webhooks of a change-feed batch inside the batch's transaction: the deliveries
 * are attempted at once (through the process's sender, each endpoint within its concurrency),
 * and written with their outcomes, so a delivery that succeeds first time costs one row insert
 * and no update. The batch goes in chunks, pipelined: while a chunk's requests run, the next
 * chunk is read; while it is written, the next one's requests run. An endpoint that failed last
 * time, or is stalled now, is not tried here, nor is anything once the batch has waited
 * `BATCH_BUDGET_MS`: those deliveries are written PENDING for the claim loop (which retries on the
 * schedule). A crash before the commit redoes the batch with the same webhook-ids: at least once.
 * What is left for after the commit (attempts under way, endpoints to disable) is answered.
 */
export async function deliverBatch(
  db: Queryable,
  batch: { sender: Sender; eventIds: string[]; now: Date },
): Promise<DeliveredBatch> {
  const { sender, eventIds, now } = batch;
  const deadline = performance.now() + BATCH_BUDGET_MS;
  const start = (rows: Candidate[]): Chunk => ({
    rows,
    attempts: rows.map((c) =>
      c.healthy && !sender.closed && performance.now() < deadline && sender.stalledMs(c.endpoint_id) < STALL_MS
        ? sender.submit(c)
        : undefined,
    ),
  });
  const result: DeliveredBatch = { pending: false, underWay: [], written: [] };
  let chunk = start(await candidates(db, eventIds.slice(0, CHUNK_EVENTS)));
  for (let from = CHUNK_EVENTS; ; from += CHUNK_EVENTS) {
    const reading = from < eventIds.length ? candidates(db, eventIds.slice(from, from + CHUNK_EVENTS)) : undefined;
    reading?.catch(() => {}); // awaited below, after the requests: its error is thrown there
    await settle(
      chunk.attempts.filter((a): a is QueuedAttempt => a !== undefined),
      sender,
      deadline,
    );
    const next = reading ? start(await reading) : undefined;
    const deliveries = chunk.rows.map((c, i) => newDelivery(c, chunk.attempts[i], now));
    if (deliveries.length > 0) {
      const outcomes = chunk.attempts.flatMap((a) => (a?.done ? [a.done] : []));
      result.written.push(await insertDeliveries(db, deliveries, outcomes, now));
    }
    deliveries.forEach((d, i) => {
      const attempt = chunk.attempts[i];
      if (d.status === 'SENDING' && attempt) result.underWay.push(attempt);
      if (d.status === 'PENDING') result.pending = true;
    });
    if (!next) return result;
    chunk = next;
  }
}
