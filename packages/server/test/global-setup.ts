import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresBackend } from '@agendajs/postgres-backend';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { runMigrations } from '../src/db/migrator.js';
import { createLogger } from '../src/logger.js';
import { freePort } from './ports.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
  }
}

/**
 * One real PostgreSQL for the whole run: `TEST_DATABASE_URL` when given, otherwise an embedded
 * server in a temp dir. A template database is migrated once; each test file clones it.
 */
export default async function setup(project: TestProject) {
  const logger = createLogger('warn');
  let adminUrl = process.env.TEST_DATABASE_URL;
  let stop: (() => Promise<void>) | undefined;
  let dir: string | undefined;
  if (!adminUrl) {
    dir = mkdtempSync(join(tmpdir(), 'pigeon-test-pg-'));
    chmodSync(dir, 0o755); // as root, PostgreSQL runs as the postgres user and must reach its data dir
    const embedded = await startEmbeddedPostgres({
      dataDir: join(dir, 'data'),
      port: await freePort(),
      password: 'pigeon-test',
      logger,
    });
    adminUrl = embedded.url('postgres');
    stop = embedded.stop;
  }
  const template = `pigeon_template_${process.pid}`;
  await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${template}`);
  await adminQuery(adminUrl, `CREATE DATABASE ${template}`);
  const templateUrl = withDatabase(adminUrl, template);
  await runMigrations(templateUrl, logger);
  await createAgendaSchema(templateUrl);

  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);

  return async () => {
    await stop?.();
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
}

async function createAgendaSchema(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const backend = new PostgresBackend({ pool, disableNotifications: true });
  await backend.connect();
  await backend.disconnect();
  await pool.end();
}

export async function adminQuery(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
