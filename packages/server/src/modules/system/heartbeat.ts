import { hostname } from 'node:os';
import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { lastDeliveryErrorSeen } from '../../metrics/delivery.js';
import { VERSION } from '../../version.js';

/** Rows of processes gone for this long are removed (a crashed process never deletes its own). */
const FORGET_AFTER = '1 day';

export interface WorkerHeartbeat {
  id: string;
  host: string;
  pid: number;
  version: string;
  startedAt: Date;
  seenAt: Date;
  alive: boolean;
  lastError: string | null;
  lastErrorAt: Date | null;
}

/**
 * A process running workers says it is alive every `heartbeatMs`, with the last delivery error it
 * saw; its row is removed when it stops cleanly. A row older than three beats is a dead process.
 */
export function startHeartbeat(deps: AppDeps): { stop: () => Promise<void> } {
  const { pool } = deps.db;
  const id = `${hostname()}:${process.pid}`;
  const beat = async () => {
    const error = lastDeliveryErrorSeen();
    await queryRows(
      pool,
      sql`INSERT INTO worker_heartbeats (id, host, pid, version, last_error, last_error_at)
          VALUES (${id}, ${hostname()}, ${process.pid}, ${VERSION}, ${error?.message ?? null}, ${error?.at ?? null})
          ON CONFLICT (id) DO UPDATE SET seen_at = now(), version = EXCLUDED.version,
            last_error = COALESCE(EXCLUDED.last_error, worker_heartbeats.last_error),
            last_error_at = COALESCE(EXCLUDED.last_error_at, worker_heartbeats.last_error_at)`,
    );
  };
  const forget = () =>
    queryRows(pool, sql`DELETE FROM worker_heartbeats WHERE seen_at < now() - ${FORGET_AFTER}::interval`);
  const tick = () =>
    beat().catch((err) => deps.logger.warn({ err }, 'worker heartbeat not recorded (readiness will say so)'));
  const first = tick()
    .then(forget)
    .catch(() => {});
  const timer = setInterval(tick, deps.config.health.heartbeatMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await first;
      await queryRows(pool, sql`DELETE FROM worker_heartbeats WHERE id = ${id}`).catch(() => {});
    },
  };
}

/** Every process that beat in the last day; `alive`: it beat within three beats. */
export async function workerHeartbeats(db: Queryable, heartbeatMs: number): Promise<WorkerHeartbeat[]> {
  const rows = await queryRows<{
    id: string;
    host: string;
    pid: number;
    version: string;
    started_at: Date;
    seen_at: Date;
    alive: boolean;
    last_error: string | null;
    last_error_at: Date | null;
  }>(
    db,
    sql`SELECT *, seen_at > now() - make_interval(secs => ${(3 * heartbeatMs) / 1000}) AS alive
        FROM worker_heartbeats ORDER BY started_at, id`,
  );
  return rows.map((r) => ({
    id: r.id,
    host: r.host,
    pid: r.pid,
    version: r.version,
    startedAt: r.started_at,
    seenAt: r.seen_at,
    alive: r.alive,
    lastError: r.last_error,
    lastErrorAt: r.last_error_at,
  }));
}
