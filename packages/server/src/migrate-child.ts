import { runMigrations } from './db/migrator.js';
import { createLogger } from './logger.js';

/**
 * The migrator's process (`db/migrate.ts` forks it when a migration is pending): it receives the
 * database URL over IPC, applies the migrations, answers with their names and exits, taking
 * MikroORM's memory with it.
 */
// The parent holds the migration lock on its own connection: if it goes, this process goes too,
// and closing its connection rolls back the migration in flight (they run in one transaction), so
// the next start that takes the lock never runs them beside this one.
process.once('disconnect', () => process.exit(1));
if (!process.connected) process.exit(1);

process.once('message', async (message: { url: string; logLevel: string }) => {
  try {
    const applied = await runMigrations(message.url, createLogger(message.logLevel));
    process.send?.({ applied }, () => process.exit(0));
  } catch (err) {
    process.send?.({ error: err instanceof Error ? err.message : String(err) }, () => process.exit(1));
  }
});
