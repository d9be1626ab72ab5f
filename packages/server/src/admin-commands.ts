import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { z } from 'zod';
import type { Config } from './config/index.js';
import { loadOrCreateSecrets, saveSecrets } from './config/secrets.js';
import { keyringOf } from './db/at-rest.js';
import { openDatabase } from './db/database.js';
import { migrateWithLock } from './db/migrate.js';
import { queryRows, sql } from './db/query.js';
import type { Logger } from './logger.js';
import { passwordProblem } from './modules/auth/passwords.js';
import { resealDkimKeys } from './modules/domains/key-storage.js';
import { createUserWithProject, describeCredentials } from './modules/projects/bootstrap.js';
import { PROJECT_COLUMNS, type Project } from './modules/projects/project.js';
import { setProjectDisabled } from './modules/projects/service.js';
import { readOperations } from './modules/system/operations.js';
import { recordSharedSecrets } from './modules/system/secret-fingerprints.js';
import { formatStatus } from './modules/system/status-report.js';

/** Opens the database (migrated), runs one admin action, closes everything. */
async function withDatabase<T>(config: Config, logger: Logger, action: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const db = await openDatabase(config, logger, { shareRunningEmbedded: true });
  try {
    await migrateWithLock(db);
    return await action(db.pool);
  } finally {
    await db.close();
  }
}

export async function migrateCommand(config: Config, logger: Logger): Promise<string> {
  const db = await openDatabase(config, logger, { shareRunningEmbedded: true });
  try {
    const applied = await migrateWithLock(db, logger);
    return applied.length ? `Applied: ${applied.join(', ')}` : 'Database schema is up to date.';
  } finally {
    await db.close();
  }
}

/**
 * `pigeon record-secrets`: this process's SESSION_SECRET, LINK_SIGNING_SECRET and DATA_ENCRYPTION_KEY
 * become the ones every process on the database must hold (after changing one on every machine).
 */
export async function recordSecretsCommand(config: Config, logger: Logger): Promise<string> {
  await withDatabase(config, logger, (pool) => recordSharedSecrets(pool, config));
  return 'Recorded the fingerprints of SESSION_SECRET, LINK_SIGNING_SECRET and DATA_ENCRYPTION_KEY: processes with other values now refuse to start.';
}

const CreateUserArgs = z.object({
  email: z.string().trim().toLowerCase().email(),
  password: z.string().min(10, 'must be at least 10 characters'),
  project: z.string().trim().min(1).max(100).default('My project'),
});

export async function createUserCommand(config: Config, logger: Logger, args: Record<string, unknown>) {
  const parsed = CreateUserArgs.safeParse(args);
  if (!parsed.success)
    throw new Error(parsed.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('\n'));
  const { email, password, project } = parsed.data;
  const weak = await passwordProblem(password, email);
  if (weak) throw new Error(`--password: ${weak}`);
  const credentials = await withDatabase(config, logger, (pool) =>
    createUserWithProject(pool, email, password, project),
  );
  return describeCredentials(credentials, config.http.publicUrl);
}

export async function keysCommand(config: Config, logger: Logger): Promise<string> {
  const projects = await withDatabase(config, logger, (pool) =>
    queryRows<Project>(pool, sql`SELECT ${PROJECT_COLUMNS} FROM projects p ORDER BY p.created_at, p.id`),
  );
  if (projects.length === 0) return 'No projects yet.';
  return projects
    .map(
      (p) =>
        `${p.name} (${p.id})${p.disabled ? ' [disabled]' : ''}\n  public: ${p.publicKey}\n  secret: ${p.secretKey}`,
    )
    .join('\n');
}

export async function projectCommand(
  config: Config,
  logger: Logger,
  action: string | undefined,
  id: string | undefined,
  reason: string | undefined,
) {
  if ((action !== 'disable' && action !== 'enable') || !id) {
    throw new Error('usage: pigeon project disable <projectId> --reason "…" | pigeon project enable <projectId>');
  }
  const disabledReason = action === 'disable' ? (reason ?? 'Disabled by an operator') : null;
  await withDatabase(config, logger, (pool) => setProjectDisabled(pool, id, disabledReason));
  return `Project ${id} ${action}d.`;
}

const HEX_KEY = /^[0-9a-fA-F]{64}$/;

/**
 * `pigeon rotate-data-key [--new-key HEX]`: re-encrypts every DKIM private key under a new data
 * encryption key, in one transaction. With the key in the secrets file, the new key (generated
 * unless given) is written there first, with the old one kept as `dataEncryptionPrevious`, so
 * every stored key stays readable whatever happens. With DATA_ENCRYPTION_KEY, give the new key
 * with --new-key, then set it (the old one as DATA_ENCRYPTION_KEY_PREVIOUS until every process
 * has restarted). Restart Pigeon afterwards: running processes know only the keys they started with.
 */
export async function rotateDataKeyCommand(config: Config, logger: Logger, args: { newKey?: string }) {
  if (args.newKey !== undefined && !HEX_KEY.test(args.newKey))
    throw new Error('--new-key: must be 64 hexadecimal characters');
  const { fromEnvironment, current } = config.secrets.dataEncryption;
  if (fromEnvironment && !args.newKey) {
    throw new Error('DATA_ENCRYPTION_KEY is set: give the new key with --new-key (e.g. `openssl rand -hex 32`)');
  }
  const newKey = args.newKey ?? randomBytes(32).toString('hex');
  if (!fromEnvironment) {
    const persisted = loadOrCreateSecrets(config.dataDir);
    saveSecrets(config.dataDir, { ...persisted, dataEncryption: newKey, dataEncryptionPrevious: current });
  }
  const db = await openDatabase(config, logger, { shareRunningEmbedded: true });
  let resealed: number;
  try {
    await migrateWithLock(db);
    resealed = await resealDkimKeys(db.pool, keyringOf(config), Buffer.from(newKey, 'hex'));
    await recordSharedSecrets(db.pool, config, ['DATA_ENCRYPTION_KEY'], { DATA_ENCRYPTION_KEY: newKey });
  } finally {
    await db.close();
  }
  const next = fromEnvironment
    ? `Now set DATA_ENCRYPTION_KEY=${newKey} (and DATA_ENCRYPTION_KEY_PREVIOUS=${current} until every process has restarted) and restart Pigeon.`
    : `The new key is in ${config.dataDir}/secrets.json (the previous one is kept there for reading). Restart Pigeon.`;
  return `Re-encrypted ${resealed} DKIM private key(s) under the new data encryption key.\n${next}`;
}

/**
 * `pigeon status [--json]`: the queue, the feed, workflows and workers, read from the database
 * (never migrated here), so it works from another shell or host against a running Pigeon.
 */
export async function statusCommand(config: Config, logger: Logger, args: { json?: boolean }): Promise<string> {
  const db = await openDatabase(config, logger, { shareRunningEmbedded: true });
  try {
    const relays = config.mail.relays.map((r) => r.name);
    const ops = await readOperations(db.pool, config.health.heartbeatMs, relays);
    return args.json ? JSON.stringify(ops, null, 2) : formatStatus(ops);
  } finally {
    await db.close();
  }
}
