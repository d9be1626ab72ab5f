#!/usr/bin/env node
import { parseArgs } from 'node:util';
import type { Config, ProcessRole } from './config/index.js';
import type { Logger } from './logger.js';
import type { StartOptions } from './main.js';
import {
  holdYoungGenerationDuringStartup,
  limitOldGenerationGrowth,
  releaseYoungGenerationHold,
} from './startup-heap.js';

// Before anything else loads: imported statically, these modules (bundled chunks) would be
// evaluated before this line.
holdYoungGenerationDuringStartup();
const [
  {
    createUserCommand,
    keysCommand,
    migrateCommand,
    projectCommand,
    recordSecretsCommand,
    rotateDataKeyCommand,
    statusCommand,
  },
  { ConfigError, loadConfigFromEnvironment },
  { createLogger },
  { startPigeon },
  { forkWorkerProcesses, launchApiProcess, WORKER_READY },
] = await Promise.all([
  import('./admin-commands.js'),
  import('./config/index.js'),
  import('./logger.js'),
  import('./main.js'),
  import('./supervisor.js'),
]);

const USAGE = `Usage: pigeon <command>

Commands:
  start                          the API in this process and WORKER_PROCESSES worker processes,
                                 restarted if they die (default; WORKER_PROCESSES=0: one process)
  api                            HTTP API only (jobs are queued for workers)
  worker                         job workers only (no HTTP)
  migrate                        apply pending database migrations and exit
  status [--json]                queue by priority, change-feed lag, workflows waiting, workers
                                 alive, last delivery error (read from the database)
  create-user --email E --password P [--project NAME]
                                 create a user owning a new project; prints its keys
  keys                           print every project's keys
  project disable <id> [--reason TEXT] | project enable <id>
                                 stop or restore a project's writes
  rotate-data-key [--new-key HEX]
                                 re-encrypt DKIM private keys under a new data encryption key
                                 (then restart Pigeon)
  mcp                            the MCP server over stdio, for a local MCP client: its tools call
                                 the API of PIGEON_URL (default PUBLIC_URL, else
                                 http://localhost:PORT) with PIGEON_API_KEY (a secret key)
  record-secrets                 make this environment's SESSION_SECRET, LINK_SIGNING_SECRET and
                                 DATA_ENCRYPTION_KEY the ones every process must share (after
                                 changing one on every machine; others then refuse to start)

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
      'new-key': { type: 'string' },
      json: { type: 'boolean' },
      // Internal: a process forked by `pigeon start` (the API, or a worker), which reports to and lives with its parent.
      supervised: { type: 'boolean' },
      slot: { type: 'string' },
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
    'record-secrets': recordSecretsCommand,
    'rotate-data-key': (c, l) => rotateDataKeyCommand(c, l, { newKey: values['new-key'] }),
    status: (c, l) => statusCommand(c, l, { json: values.json }),
  };
  if (command === 'mcp') {
    // A client of a running Pigeon: no database, and stdout carries only the protocol.
    const [{ loadMcpClientConfigFromEnvironment }, { runStdioMcpServer }] = await Promise.all([
      import('./config/mcp-client.js'),
      import('./modules/mcp/stdio.js'),
    ]);
    await runStdioMcpServer(loadMcpClientConfigFromEnvironment());
    return;
  }
  if (!(command in SERVER_ROLES) && !(command in admin)) {
    console.error(`Unknown command "${command}".\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const config = loadConfigFromEnvironment(SERVER_ROLES[command] ?? 'all');
  const supervised = values.supervised === true && command in SERVER_ROLES;
  // Lines of every process of `pigeon start` share one stdout: a worker's carry its pid.
  const adminCommand = admin[command];
  const logger =
    supervised && command === 'worker'
      ? createLogger(config.log.level).child({ workerPid: process.pid })
      : createLogger(config.log.level, { toStderr: adminCommand !== undefined });
  if (adminCommand) {
    console.log(await adminCommand(config, logger));
    return;
  }
  if ((command === 'start' || command === 'api') && !supervised) {
    // This process only supervises: the API (and the workers it forks) run in a child with a heap limit.
    launchApiProcess({
      cliPath: process.argv[1] as string,
      args: [command],
      maxOldSpaceMb: config.apiMaxOldSpaceMb,
      logger,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
    });
    return;
  }
  if (command === 'start' && config.workerProcesses > 0) {
    const cliPath = process.argv[1] as string;
    await serve(
      { ...config, role: 'api' },
      logger,
      { alongside: (deps) => forkWorkerProcesses(deps, cliPath) },
      supervised,
    );
    return;
  }
  const workerSlot = supervised && command === 'worker' ? { supervisedSlot: Number(values.slot ?? 1) } : {};
  await serve(config, logger, workerSlot, supervised);
}

async function serve(config: Config, logger: Logger, options: StartOptions, supervised = false) {
  // A supervised worker never outlives `pigeon start`: the IPC channel closes when the parent dies.
  let stop: ((reason: string) => void) | undefined;
  if (supervised) process.once('disconnect', () => (stop ? stop('parent exited') : process.exit(1)));
  const pigeon = await startPigeon(config, logger, options);
  releaseYoungGenerationHold();
  if (config.role !== 'worker') limitOldGenerationGrowth(config.apiHeapGrowingPercent);
  let stopping = false;
  stop = (signal: string) => {
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
  process.once('SIGTERM', () => stop?.('SIGTERM'));
  process.once('SIGINT', () => stop?.('SIGINT'));
  if (supervised) {
    if (process.connected) process.send?.({ type: WORKER_READY });
    else stop('parent exited');
  }
  if (supervised && !pigeon.url) return;
  if (!pigeon.url) {
    console.log('Pigeon worker is running.');
    return;
  }
  if (pigeon.welcome) console.log(`\n${pigeon.welcome}`);
  console.log(`\nPigeon is listening on ${pigeon.url}  (public URL ${config.http.publicUrl})`);
  if (options.alongside) console.log(`Job workers: ${config.workerProcesses} processes (WORKER_PROCESSES).`);
  else if (config.role === 'all') console.log('Job workers run in this process (WORKER_PROCESSES=0).');
  console.log(`Console: ${config.http.publicUrl}/app/`);
  console.log(`API reference: ${config.http.publicUrl}/docs/   OpenAPI: ${config.http.publicUrl}/openapi.json\n`);
}

main().catch((err) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(`pigeon: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
