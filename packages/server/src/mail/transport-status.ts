import type { TransportState } from '@pigeon/contract';
import { preparedRows, queryRows, sql } from '../db/query.js';
import type { Queryable } from '../db/sql.js';

/** The shared view of a mail transport's circuit breaker (table `transport_status`). */
export interface TransportStatus {
  transport: string;
  state: TransportState;
  downSince: string | null;
  lastError: string | null;
  nextProbeAt: string | null;
}

interface StatusRow {
  down_since: Date | null;
  last_error: string | null;
  next_probe_at: Date | null;
}

/** One primary-key read: cheap enough for `/health`. */
export async function readTransportStatus(db: Queryable, transport: string): Promise<TransportStatus> {
  // Named: `/health` runs it per request, and a prepared statement skips the parse and plan.
  const [row] = await preparedRows<StatusRow>(
    db,
    'transport_status.read',
    sql`SELECT down_since, last_error, next_probe_at FROM transport_status WHERE transport = ${transport}`,
  );
  return statusOf(transport, row);
}

/**
 * Every relay's status, in the order given (`/health`, `pigeon status`): with one relay the same
 * primary-key read as before, with several one statement for all.
 */
export async function readRelayStatuses(db: Queryable, names: string[]): Promise<TransportStatus[]> {
  if (names.length === 1) return [await readTransportStatus(db, names[0] as string)];
  const rows = await queryRows<StatusRow & { transport: string }>(
    db,
    sql`SELECT transport, down_since, last_error, next_probe_at FROM transport_status WHERE transport = ANY(${names}::text[])`,
  );
  return names.map((transport) =>
    statusOf(
      transport,
      rows.find((r) => r.transport === transport),
    ),
  );
}

function statusOf(transport: string, row: StatusRow | undefined): TransportStatus {
  const down = row?.down_since ? row : undefined;
  return {
    transport,
    state: down ? 'down' : 'up',
    downSince: down?.down_since?.toISOString() ?? null,
    lastError: down?.last_error ?? null,
    nextProbeAt: down?.next_probe_at?.toISOString() ?? null,
  };
}

/** A process saw the transport fail: down since the first process that saw it (kept across processes). */
export async function markTransportDown(db: Queryable, transport: string, error: string, nextProbeAt: Date) {
  await queryRows(
    db,
    sql`INSERT INTO transport_status (transport, down_since, last_error, next_probe_at)
        VALUES (${transport}, now(), ${error}, ${nextProbeAt})
        ON CONFLICT (transport) DO UPDATE SET down_since = COALESCE(transport_status.down_since, now()),
          last_error = EXCLUDED.last_error, next_probe_at = EXCLUDED.next_probe_at, updated_at = now()`,
  );
}

/** A message went through: up again. Answers the outage it ended (undefined: it was up). */
export async function markTransportUp(
  db: Queryable,
  transport: string,
): Promise<{ downSince: Date; ownersNotified: boolean } | undefined> {
  const [row] = await queryRows<{ down_since: Date; owners_notified_at: Date | null }>(
    db,
    sql`UPDATE transport_status t SET down_since = NULL, next_probe_at = NULL, owners_notified_at = NULL,
          updated_at = now()
        FROM (SELECT down_since, owners_notified_at FROM transport_status WHERE transport = ${transport} FOR UPDATE) old
        WHERE t.transport = ${transport} AND old.down_since IS NOT NULL
        RETURNING old.down_since, old.owners_notified_at`,
  );
  return row && { downSince: row.down_since, ownersNotified: row.owners_notified_at !== null };
}

/**
 * Claims the outage notice once the transport has been down `afterMs`: one process gets the
 * outage's start and sends it; `releaseOutageNotice` gives the claim back when sending failed.
 */
export async function claimOutageNotice(db: Queryable, transport: string, afterMs: number): Promise<Date | undefined> {
  const [row] = await queryRows<{ down_since: Date }>(
    db,
    sql`UPDATE transport_status SET owners_notified_at = now()
        WHERE transport = ${transport} AND owners_notified_at IS NULL
          AND down_since <= now() - make_interval(secs => ${afterMs / 1000})
        RETURNING down_since`,
  );
  return row?.down_since;
}

export async function releaseOutageNotice(db: Queryable, transport: string): Promise<void> {
  await queryRows(db, sql`UPDATE transport_status SET owners_notified_at = NULL WHERE transport = ${transport}`);
}
