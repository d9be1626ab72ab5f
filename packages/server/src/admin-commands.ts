import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Config } from './config/index.js';
import { openDatabase } from './db/database.js';
import { migrateWithLock } from './db/migrate.js';
import type { Logger } from './logger.js';
import { createUserWithProject, describeCredentials } from './modules/accounts/bootstrap.js';
import { ProjectSchema } from './modules/projects/project.entity.js';
import { setProjectDisabled } from './modules/projects/service.js';

/** Opens the database (migrated), runs one admin action, closes everything. */
async function withDatabase<T>(config: Config, logger: Logger, action: (em: EntityManager) => Promise<T>): Promise<T> {
  const db = await openDatabase(config, logger, { shareRunningEmbedded: true });
  try {
    await migrateWithLock(db);
    return await action(db.orm.em.fork());
  } finally {
    await db.close();
  }
}

export async function migrateCommand(config: Config, logger: Logger): Promise<string> {
  const db = await openDatabase(config, logger, { shareRunningEmbedded: true });
  try {
    const applied = await migrateWithLock(db);
    return applied.length ? `Applied: ${applied.join(', ')}` : 'Database schema is up to date.';
  } finally {
    await db.close();
  }
}

const CreateUserArgs = z.object({
  email: z.string().trim().toLowerCase().email(),
  password: z.string().min(8, 'must be at least 8 characters'),
  project: z.string().trim().min(1).max(100).default('My project'),
});

export async function createUserCommand(config: Config, logger: Logger, args: Record<string, unknown>) {
  const parsed = CreateUserArgs.safeParse(args);
  if (!parsed.success)
    throw new Error(parsed.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('\n'));
  const { email, password, project } = parsed.data;
  const credentials = await withDatabase(config, logger, (em) => createUserWithProject(em, email, password, project));
  return describeCredentials(credentials, config.http.publicUrl);
}

export async function keysCommand(config: Config, logger: Logger): Promise<string> {
  const projects = await withDatabase(config, logger, (em) =>
    em.find(ProjectSchema, {}, { orderBy: { createdAt: 'asc' } }),
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
  await withDatabase(config, logger, (em) => setProjectDisabled(em, id, disabledReason));
  return `Project ${id} ${action}d.`;
}
