#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ConfigError, loadConfigFromEnvironment, type ProcessRole } from './config/index.js';
import { openDatabase } from './db/database.js';
import { migrateWithLock } from './db/migrate.js';
import { createLogger } from './logger.js';
import { startPigeon } from './main.js';

const USAGE = `Usage: pigeon <command>

Commands:
  start     API and workers in one process (default)
  api       HTTP API only (jobs are queued for workers)
  worker    job workers only (no HTTP)
  migrate   apply pending database migrations and exit

Configuration comes from environment variables; see the README.`;

const ROLES: Record<string, ProcessRole> = { start: 'all', api: 'api', worker: 'worker' };

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { help: { type: 'boolean', short: 'h' } },
  });
  const command = positionals[0] ?? 'start';
  if (values.help || command === 'help') {
    console.log(USAGE);
    return;
  }
  if (command !== 'migrate' && !(command in ROLES)) {
    console.error(`Unknown command "${command}".\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const config = loadConfigFromEnvironment(ROLES[command] ?? 'all');
  const logger = createLogger(config.log.level);

  if (command === 'migrate') {
    const db = await openDatabase(config, logger);
    try {
      const applied = await migrateWithLock(db);
      console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Database schema is up to date.');
    } finally {
      await db.close();
    }
    return;
  }

  const pigeon = await startPigeon(config, logger);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 5000);
    force.unref();
    pigeon.stop().then(() => {
      logger.info('stopped');
      process.exit(0);
    });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  if (pigeon.url) {
    console.log(`\nPigeon is listening on ${pigeon.url}  (public URL ${config.http.publicUrl})`);
    console.log(`API reference: ${config.http.publicUrl}/docs/   OpenAPI: ${config.http.publicUrl}/openapi.json\n`);
  } else {
    console.log('Pigeon worker is running.');
  }
}

main().catch((err) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(`pigeon: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
