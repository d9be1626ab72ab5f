import type { Database } from './database.js';
import { migrate } from './orm.js';

/** Any constant: only one Pigeon process at a time runs migrations against a database. */
const MIGRATION_LOCK = 7_000_001;

/** Applies pending migrations under an advisory lock so concurrent starts do not race. */
export async function migrateWithLock(db: Database): Promise<string[]> {
  const client = await db.pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    return await migrate(db.orm);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    client.release();
  }
}
