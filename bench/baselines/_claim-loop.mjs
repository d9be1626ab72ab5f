// The durable part the same-work ceilings share (bare-durable-delivery.mjs, bare-durable-webhooks.mjs):
// what "recorded durably, once, and survives kill -9" needs and nothing more. Queued rows of a
// scratch table are claimed in batches (one UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED
// LIMIT n) RETURNING, so processes never take the same row; the claim carries a deadline, after
// which a dead process's rows are claimable again), sent IN_FLIGHT at a time, and each batch's
// outcomes are recorded in one grouped UPDATE once its last row has ended. A process killed between
// a send and its batch's record leaves rows SENDING that are sent again after the deadline: at least
// once, as Pigeon. The scratch table (created by the scenario, see queueTableSql) has
//   id bigserial, <the payload's columns>, status text ('QUEUED' → 'SENDING' → 'SENT' | 'FAILED'),
//   claimed_until timestamptz, sent_at timestamptz
// and a partial index on id over the rows still to do (QUEUED or SENDING).
import { machineBusyCpuSeconds } from '../lib/process.mjs';

/**
 * `CREATE TABLE` (and its partial index) of a scratch queue `table` with the payload columns
 * `columns` (SQL, e.g. `recipient text NOT NULL, first_name text`); dropped first if it exists.
 */
export const queueTableSql = (table, columns) => [
  `DROP TABLE IF EXISTS ${table}`,
  `CREATE TABLE ${table} (id bigserial PRIMARY KEY, ${columns}, status text NOT NULL DEFAULT 'QUEUED',
     claimed_until timestamptz, sent_at timestamptz)`,
  `CREATE INDEX ${table}_todo ON ${table} (id) WHERE status IN ('QUEUED', 'SENDING')`,
];

/**
 * Drains `table` through `send(row)` (resolves: SENT; throws: FAILED) with `inFlight` sends at a
 * time: one claim of `batch` rows in flight at most, started whenever fewer than `inFlight` claimed
 * rows wait to be sent; a batch's outcomes recorded in one statement once its last row has ended.
 * Returns when a claim finds nothing left and every record has committed, with counts, the
 * first error, the time span and the CPU (its own and the whole machine's) at both ends.
 */
export async function drainQueue({ pool, table, select, batch, inFlight, claimSeconds = 120, send }) {
  const claimSql = `UPDATE ${table} t SET status = 'SENDING', claimed_until = now() + make_interval(secs => $2)
    WHERE t.id IN (
      SELECT id FROM ${table}
      WHERE status = 'QUEUED' OR (status = 'SENDING' AND claimed_until < now())
      ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
    RETURNING t.id, ${select}`;
  const recordSql = `UPDATE ${table} t SET status = v.status, sent_at = now(), claimed_until = NULL
    FROM unnest($1::bigint[], $2::text[]) AS v(id, status) WHERE t.id = v.id`;

  const waiting = []; // claimed rows not yet handed to a send: { row, of: its batch }
  const records = [];
  let claiming = null;
  let exhausted = false;
  const out = { sent: 0, failed: 0, firstError: undefined, claims: 0, records: 0 };

  const claim = async () => {
    const { rows } = await pool.query(claimSql, [batch, claimSeconds]);
    out.claims++;
    if (!rows.length) exhausted = true;
    const of = { ids: [], statuses: [], left: rows.length };
    for (const row of rows) waiting.push({ row, of });
  };
  const refill = () => {
    if (!claiming && !exhausted && waiting.length < inFlight)
      claiming = claim().finally(() => {
        claiming = null;
      });
  };
  const record = (of) => {
    const p = pool.query(recordSql, [of.ids, of.statuses]);
    p.catch(() => {}); // awaited (and thrown) at the end
    records.push(p);
    out.records++;
  };

  const cpu0 = process.cpuUsage();
  const machineAtStart = machineBusyCpuSeconds();
  const startAt = performance.timeOrigin + performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (;;) {
        refill();
        if (!waiting.length) {
          if (!claiming) return; // exhausted: nothing left to claim
          await claiming;
          continue;
        }
        const { row, of } = waiting.shift();
        let status = 'SENT';
        try {
          await send(row);
          out.sent++;
        } catch (err) {
          status = 'FAILED';
          out.failed++;
          out.firstError ??= String(err?.message ?? err);
        }
        of.ids.push(row.id);
        of.statuses.push(status);
        if (--of.left === 0) record(of);
      }
    }),
  );
  await Promise.all(records);
  const endAt = performance.timeOrigin + performance.now();
  const machineAtEnd = machineBusyCpuSeconds();
  const cpu = process.cpuUsage(cpu0);
  return {
    ...out,
    startAt,
    endAt,
    seconds: (endAt - startAt) / 1000,
    perSec: out.sent / ((endAt - startAt) / 1000),
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    machineAtStart,
    machineAtEnd,
  };
}
