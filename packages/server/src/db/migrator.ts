import { Migrator } from '@mikro-orm/migrations';
import { type MigrationObject, MikroORM, PostgreSqlDriver } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.js';
import { MIGRATIONS } from './migrations/index.js';

/**
 * The schema's migrations, applied with MikroORM's migrator (DESIGN §2): the only place Pigeon
 * loads MikroORM. `pigeon start` and `pigeon migrate` run it in a child process (`migrate-child`)
 * only when a migration is pending, so no long-running process keeps MikroORM's ~39 MB
 * (docs/MEMORY.md). `to` stops after that migration (tests of a later migration on older data).
 * Returns the names applied.
 */
export async function runMigrations(url: string, logger: Logger, opts: { to?: string } = {}): Promise<string[]> {
  const migrationsList: MigrationObject[] = await Promise.all(
    MIGRATIONS.map(async ({ name, load }) => ({ name, class: (await load())[name] as MigrationObject['class'] })),
  );
  const orm = await MikroORM.init({
    driver: PostgreSqlDriver,
    clientUrl: url,
    entities: [],
    discovery: { warnWhenNoEntities: false },
    extensions: [Migrator],
    migrations: { migrationsList, transactional: true, allOrNothing: true, snapshot: false },
    pool: { min: 0, max: 1 },
    debug: false,
    forceUtcTimezone: true,
    allowGlobalContext: false,
    logger: (message) => logger.debug({ orm: message }, 'orm'),
  });
  try {
    const applied = await orm.getMigrator().up(opts.to ? { to: opts.to } : undefined);
    return applied.map((m) => m.name);
  } finally {
    await orm.close(true);
  }
}
