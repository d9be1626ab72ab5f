import pg from 'pg';
import type { Logger } from '../logger.js';
import type { Queryable } from './sql.js';

/** How often the replica's lag is read. */
const SAMPLE_MS = 2000;

export interface ReplicaState {
  /** Seconds the replica's replay trails the primary's commits; null when it did not answer. */
  lagSeconds: number | null;
  /** Whether reads that may trail the primary go to the replica now (answering, within the bound). */
  inUse: boolean;
}

export interface ReadReplica {
  /** Runs a read on the replica while it keeps up; on the primary otherwise, or when the replica fails it. */
  reads: Queryable;
  state: () => ReplicaState;
  /** Settles once the replica's lag has been read the first time. */
  firstSample: Promise<void>;
  close: () => Promise<void>;
}

/**
 * Seconds behind: 0 when everything received is replayed (an idle primary sends nothing, so the
 * last replayed commit's age would grow without any lag); otherwise the age of the last commit
 * replayed, which is how stale a read there can be.
 */
const LAG_SQL = `SELECT CASE WHEN NOT pg_is_in_recovery() OR pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
  ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0) END::float8 AS lag`;

/**
 * A pool on DATABASE_REPLICA_URL for the reads that may trail the primary (ARCHITECTURE.md "Beyond
 * one primary"). Its lag is read every 2 s; above `maxLagSeconds`, or while the replica does not
 * answer, those reads run on the primary. A read the replica fails (it went down between samples, a
 * recovery conflict cancelled it) runs again on the primary, so a replica never fails a request.
 */
export function openReplica(
  url: string,
  opts: { primary: pg.Pool; poolSize: number; maxLagSeconds: number; logger: Logger; sampleMs?: number },
): ReadReplica {
  const pool = new pg.Pool({ connectionString: url, max: opts.poolSize, connectionTimeoutMillis: 2000 });
  pool.on('error', (err) => opts.logger.warn({ err }, 'idle PostgreSQL replica client error'));
  let state: ReplicaState = { lagSeconds: null, inUse: false };
  let said: string | undefined;
  const update = (next: ReplicaState) => {
    state = next;
    const now = next.lagSeconds === null ? 'down' : next.inUse ? 'in use' : 'lagging';
    if (now === said) return;
    said = now;
    const detail = { lagSeconds: next.lagSeconds, maxLagSeconds: opts.maxLagSeconds };
    if (now === 'in use') opts.logger.info(detail, 'reads that may trail the primary go to the replica');
    else
      opts.logger.warn(
        detail,
        `the replica ${now === 'down' ? 'does not answer' : 'lags'}: its reads go to the primary`,
      );
  };
  const sample = async () => {
    try {
      const { rows } = await pool.query<{ lag: number }>(LAG_SQL);
      const lagSeconds = rows[0]?.lag ?? 0;
      update({ lagSeconds, inUse: lagSeconds <= opts.maxLagSeconds });
    } catch {
      update({ lagSeconds: null, inUse: false });
    }
  };
  const firstSample = sample();
  const timer = setInterval(() => void sample(), opts.sampleMs ?? SAMPLE_MS);
  timer.unref();

  const query = async (...args: Parameters<pg.Pool['query']>) => {
    // biome-ignore lint/suspicious/noExplicitAny: pg's query is overloaded; the arguments pass through unchanged
    const run = (db: pg.Pool) => (db.query as (...a: unknown[]) => Promise<any>)(...args);
    if (!state.inUse) return run(opts.primary);
    try {
      return await run(pool);
    } catch (err) {
      opts.logger.warn({ err }, 'a read failed on the replica: run on the primary');
      void sample();
      return run(opts.primary);
    }
  };
  return {
    reads: { query: query as pg.Pool['query'] },
    state: () => state,
    firstSample,
    close: async () => {
      clearInterval(timer);
      await pool.end().catch(() => {});
    },
  };
}
