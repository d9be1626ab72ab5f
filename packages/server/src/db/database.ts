import pg from 'pg';
import { type Config, embeddedPostgresPassword } from '../config/index.js';
import type { Logger } from '../logger.js';
import { startEmbeddedPostgres } from './embedded.js';
import { openReplica, type ReadReplica } from './replica.js';
import type { Queryable } from './sql.js';

export class DatabaseUnavailableError extends Error {
  constructor(url: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      `Cannot connect to PostgreSQL at ${redactUrl(url)}: ${reason}. Check DATABASE_URL and that the server is running.`,
    );
    this.name = 'DatabaseUnavailableError';
  }
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}

export interface Database {
  /** The `pg` pool every statement goes through (the `sql` builder in `db/query.ts`), Agenda's too. */
  pool: pg.Pool;
  /**
   * For reads that may trail the primary by DATABASE_REPLICA_MAX_LAG_SECONDS (the analytics rollup,
   * event stats): the replica when one is configured and keeps up, the primary's pool otherwise.
   */
  reads: Queryable;
  /** Set when DATABASE_REPLICA_URL is (and the process serves requests). */
  replica?: ReadReplica;
  url: string;
  embedded: boolean;
  close: () => Promise<void>;
}

/** `DATABASE_URL` when given; otherwise Pigeon's own PostgreSQL under the data dir. */
export async function openDatabase(
  config: Config,
  logger: Logger,
  opts: { shareRunningEmbedded?: boolean; withReplica?: boolean } = {},
): Promise<Database> {
  let url = config.database.url;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (!url) {
    const embedded = await startEmbeddedPostgres({
      dataDir: `${config.dataDir}/postgres`,
      port: config.database.embeddedPort,
      password: embeddedPostgresPassword(config),
      logger,
      maxConnections: embeddedMaxConnections(config),
      shareRunning: opts.shareRunningEmbedded,
    });
    await embedded.createDatabase('pigeon');
    url = embedded.url('pigeon');
    stopEmbedded = embedded.stop;
    logger.info({ port: config.database.embeddedPort }, 'embedded PostgreSQL started');
  }
  const pool = new pg.Pool({ connectionString: url, max: config.database.poolSize });
  pool.on('error', (err) => logger.error({ err }, 'idle PostgreSQL client error'));
  try {
    await pool.query('SELECT 1');
    const replica =
      opts.withReplica && config.database.replica
        ? openReplica(config.database.replica.url, {
            primary: pool,
            poolSize: config.database.poolSize,
            maxLagSeconds: config.database.replica.maxLagSeconds,
            logger,
          })
        : undefined;
    return {
      pool,
      reads: replica?.reads ?? pool,
      replica,
      url,
      embedded: Boolean(stopEmbedded),
      close: async () => {
        await replica?.close();
        await pool.end().catch(() => {});
        await stopEmbedded?.();
      },
    };
  } catch (err) {
    await pool.end().catch(() => {});
    await stopEmbedded?.();
    throw new DatabaseUnavailableError(url, err);
  }
}

/**
 * Room for every process `pigeon start` runs (the API and its worker processes), each with a `pg`
 * pool of DATABASE_POOL_SIZE (and its LISTEN connections), plus admin commands and psql sessions.
 */
function embeddedMaxConnections(config: Config): number {
  const processes = 1 + config.workerProcesses;
  return Math.max(200, processes * config.database.poolSize * 2 + 20);
}
