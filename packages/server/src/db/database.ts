import pg from 'pg';
import { type Config, embeddedPostgresPassword } from '../config/index.js';
import type { Logger } from '../logger.js';
import { startEmbeddedPostgres } from './embedded.js';
import { createOrm, DatabaseUnavailableError, type Orm } from './orm.js';

export interface Database {
  orm: Orm;
  /** Plain `pg` pool: single-statement hot paths (prepared statements), set-based jobs, Agenda. */
  pool: pg.Pool;
  url: string;
  embedded: boolean;
  close: () => Promise<void>;
}

/** `DATABASE_URL` when given; otherwise Pigeon's own PostgreSQL under the data dir. */
export async function openDatabase(
  config: Config,
  logger: Logger,
  opts: { shareRunningEmbedded?: boolean } = {},
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
  try {
    const orm = await createOrm(url, config.database.poolSize, logger);
    const pool = new pg.Pool({ connectionString: url, max: config.database.poolSize });
    pool.on('error', (err) => logger.error({ err }, 'idle PostgreSQL client error'));
    return {
      orm,
      pool,
      url,
      embedded: Boolean(stopEmbedded),
      close: async () => {
        await pool.end().catch(() => {});
        await orm.close(true).catch(() => {});
        await stopEmbedded?.();
      },
    };
  } catch (err) {
    await stopEmbedded?.();
    throw err instanceof DatabaseUnavailableError ? err : new DatabaseUnavailableError(url, err);
  }
}

/**
 * Room for every process `pigeon start` runs (the API and its worker processes), each with an ORM
 * pool and a `pg` pool of DATABASE_POOL_SIZE, plus admin commands and psql sessions.
 */
function embeddedMaxConnections(config: Config): number {
  const processes = 1 + config.workerProcesses;
  return Math.max(200, processes * config.database.poolSize * 2 + 20);
}
