import type { Logger } from '../logger.js';
import type { Database } from './database.js';
import { migrationsList } from './migrations/index.js';
import { migrate } from './orm.js';
import { moveUnpartitionedHistory } from './partitions.js';
import { queryRows, sql } from './query.js';
import type { Queryable } from './sql.js';

/** Any constant: only one Pigeon process at a time runs migrations against a database. */
const MIGRATION_LOCK = 7_000_001;

/**
 * Applies pending migrations under an advisory lock so concurrent starts do not race, then
 * finishes moving history into its partitions if a conversion is still under way (resumable).
 */
export async function migrateWithLock(db: Database, logger?: Logger): Promise<string[]> {
  const client = await db.pool.connect();
  try {
    await queryRows(client, sql`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    const applied = await migrate(db.orm);
    await moveUnpartitionedHistory(db.pool, { logger });
    return applied;
  } finally {
    await queryRows(client, sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => {});
    client.release();
  }
}

/** Migrations this code knows that the database has not applied (empty: the schema is current). */
export async function pendingMigrations(db: Queryable): Promise<string[]> {
  const applied = await queryRows<{ name: string }>(db, sql`SELECT name FROM mikro_orm_migrations`);
  const names = new Set(applied.map((r) => r.name.replace(/\.[jt]s$/, '')));
  return migrationsList.map((m) => m.name).filter((name) => !names.has(name));
}
