#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { createUserCommand, keysCommand, migrateCommand, projectCommand } from './admin-commands.js';
import { type Config, ConfigError, loadConfigFromEnvironment, type ProcessRole } from './config/index.js';
import { createLogger, type Logger } from './logger.js';
import { startPigeon } from './main.js';

const USAGE = `Usage: pigeon <command>

Commands:
  start                          API and workers in one process (default)
  api                            HTTP API only (jobs are queued for workers)
  worker                         job workers only (no HTTP)
  migrate                        apply pending database migrations and exit
  create-user --email E --password P [--project NAME]
                                 create a user owning a new project; prints its keys
  keys                           print every project's keys
  project disable <id> [--reason TEXT] | project enable <id>
                                 stop or restore a project's writes

Configuration comes from environment variables; see the README.`;

const SERVER_ROLES: Record<string, ProcessRole> = { start: 'all', api: 'api', worker: 'worker' };

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      email: { type: 'string' },
      password: { type: 'string' },
      project: { type: 'string' },
      reason: { type: 'string' },
    },
  });
  const [command = 'start', ...rest] = positionals;
  if (values.help || command === 'help') {
    console.log(USAGE);
    return;
  }
  const admin: Record<string, (config: Config, logger: Logger) => Promise<string>> = {
    migrate: migrateCommand,
    'create-user': (c, l) => createUserCommand(c, l, values),
    keys: keysCommand,
    project: (c, l) => projectCommand(c, l, rest[0], rest[1], values.reason),
  };
  if (!(command in SERVER_ROLES) && !(command in admin)) {
    console.error(`Unknown command "${command}".\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const config = loadConfigFromEnvironment(SERVER_ROLES[command] ?? 'all');
  const logger = createLogger(config.log.level);
  const adminCommand = admin[command];
  if (adminCommand) {
    console.log(await adminCommand(config, logger));
    return;
  }
  await serve(config, logger);
}

async function serve(config: Config, logger: Logger) {
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
  if (!pigeon.url) {
    console.log('Pigeon worker is running.');
    return;
  }
  if (pigeon.welcome) console.log(`\n${pigeon.welcome}`);
  console.log(`\nPigeon is listening on ${pigeon.url}  (public URL ${config.http.publicUrl})`);
  console.log(`API reference: ${config.http.publicUrl}/docs/   OpenAPI: ${config.http.publicUrl}/openapi.json\n`);
}

main().catch((err) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(`pigeon: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
