import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, PostgreSqlDriver } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.js';
import { entities } from './entities.js';
import { migrationsList } from './migrations/index.js';

export type Orm = MikroORM;

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

export async function createOrm(url: string, poolSize: number, logger: Logger): Promise<Orm> {
  try {
    const orm = await MikroORM.init({
      driver: PostgreSqlDriver,
      clientUrl: url,
      entities,
      discovery: { warnWhenNoEntities: false },
      extensions: [Migrator],
      migrations: { migrationsList, transactional: true, allOrNothing: true, snapshot: false },
      pool: { min: 0, max: poolSize },
      debug: false,
      forceUtcTimezone: true,
      allowGlobalContext: false,
      logger: (message) => logger.debug({ orm: message }, 'orm'),
    });
    const check = await orm.checkConnection();
    if (!check.ok) {
      await orm.close(true).catch(() => {});
      throw check.error ?? new Error(check.reason);
    }
    return orm;
  } catch (err) {
    throw new DatabaseUnavailableError(url, err);
  }
}

/** Applies pending migrations; a no-op when the schema is current. Returns the names applied. */
export async function migrate(orm: Orm): Promise<string[]> {
  const applied = await orm.getMigrator().up();
  return applied.map((m) => m.name);
}
