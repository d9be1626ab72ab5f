import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createLogger, type Logger } from '../logger.js';
import type { Database } from './database.js';
import { MIGRATIONS } from './migrations/index.js';
import { moveUnpartitionedHistory } from './partitions.js';
import { queryRows, sql } from './query.js';
import type { Queryable } from './sql.js';

/** Any constant: only one Pigeon process at a time runs migrations against a database. */
const MIGRATION_LOCK = 7_000_001;

/** The bundled child entry (`dist/migrate-child.js`, next to this code's chunk once built). */
const CHILD_ENTRY = fileURLToPath(new URL('./migrate-child.js', import.meta.url));

/**
 * Applies pending migrations under an advisory lock so concurrent starts do not race, then
 * finishes moving history into its partitions if a conversion is still under way (resumable).
 * Nothing pending (every restart of a current schema): no MikroORM is loaded at all.
 */
export async function migrateWithLock(db: Database, logger?: Logger): Promise<string[]> {
  const client = await db.pool.connect();
  try {
    await queryRows(client, sql`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    const pending = await pendingMigrations(client);
    const applied = pending.length > 0 ? await applyMigrations(db.url, logger) : [];
    await moveUnpartitionedHistory(db.pool, { logger });
    return applied;
  } finally {
    await queryRows(client, sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => {});
    client.release();
  }
}

/**
 * Runs the migrator in a child process, so that MikroORM's memory goes with it. Running from the
 * TypeScript sources (tests), where there is no bundled child, it runs in this process.
 */
async function applyMigrations(url: string, logger?: Logger): Promise<string[]> {
  if (!existsSync(CHILD_ENTRY)) {
    const { runMigrations } = await import('./migrator.js');
    return runMigrations(url, logger ?? createLogger('warn'));
  }
  const child = fork(CHILD_ENTRY, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  child.send({ url, logLevel: logger?.level ?? 'warn' });
  return new Promise((resolve, reject) => {
    let answer: { applied?: string[]; error?: string } | undefined;
    child.on('message', (message: { applied?: string[]; error?: string }) => {
      answer = message;
    });
    child.on('error', reject);
    // 'close', not 'exit': every message sent before the exit has arrived by then.
    child.on('close', (code, signal) => {
      if (answer?.applied) resolve(answer.applied);
      else
        reject(new Error(`migrations failed: ${answer?.error ?? `the migrator exited (${signal ?? `code ${code}`})`}`));
    });
  });
}

/** Migrations this code knows that the database has not applied (empty: the schema is current). */
export async function pendingMigrations(db: Queryable): Promise<string[]> {
  const [table] = await queryRows<{ exists: boolean }>(
    db,
    sql`SELECT to_regclass('mikro_orm_migrations') IS NOT NULL AS exists`,
  );
  const applied = table?.exists
    ? await queryRows<{ name: string }>(db, sql`SELECT name FROM mikro_orm_migrations`)
    : [];
  const names = new Set(applied.map((r) => r.name.replace(/\.[jt]s$/, '')));
  return MIGRATIONS.map((m) => m.name).filter((name) => !names.has(name));
}
