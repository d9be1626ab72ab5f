import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { loadConfig, type ProcessRole } from '../src/config/index.js';
import { runMigrations } from '../src/db/migrator.js';
import { createLogger } from '../src/logger.js';
import { type RunningPigeon, type StartOptions, startPigeon } from '../src/main.js';
import { insertBareProject } from './fixtures/projects.js';
import { adminQuery, withDatabase } from './global-setup.js';

export const TEST_DATA_ENCRYPTION_KEY = 'a1'.repeat(32);
/**
 * The secrets every test process shares, as on several machines sharing a database (with
 * DATABASE_URL, Pigeon refuses secrets generated into one data dir).
 */
export const TEST_SHARED_SECRETS = {
  SESSION_SECRET: 'c3'.repeat(32),
  LINK_SIGNING_SECRET: 'd4'.repeat(32),
  DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
};

/** A fresh database cloned from the migrated template: each test file gets its own. */
export async function createTestDatabase(): Promise<string> {
  const admin = inject('adminDatabaseUrl');
  const name = `pigeon_test_${randomUUID().replace(/-/g, '')}`;
  await adminQuery(admin, `CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`);
  return withDatabase(admin, name);
}

/**
 * A fresh, empty database migrated up to (and including) the migration named `to`, for tests of a
 * later migration on data written before it; `up()` applies the rest.
 */
export async function databaseMigratedTo(to: string): Promise<{ url: string; up: () => Promise<void> }> {
  const admin = inject('adminDatabaseUrl');
  const name = `pigeon_migrated_${randomUUID().replace(/-/g, '')}`;
  await adminQuery(admin, `CREATE DATABASE ${name}`);
  const url = withDatabase(admin, name);
  const logger = createLogger('warn');
  await runMigrations(url, logger, { to });
  return {
    url,
    up: async () => {
      await runMigrations(url, logger);
    },
  };
}

/**
 * A pool on a fresh test database holding one bare project row `projectId` (for tests of SQL below
 * the HTTP layer); the caller ends the pool.
 */
export async function poolWithProject(projectId: string, max = 2): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: await createTestDatabase(), max });
  await insertBareProject(pool, projectId);
  return pool;
}

export interface TestPigeon extends RunningPigeon {
  url: string;
  dataDir: string;
  request: (method: string, path: string, init?: RequestOptions) => Promise<TestResponse>;
}

export interface RequestOptions {
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  body: any;
  text: string;
}

/** Starts a real Pigeon (HTTP + workers) on a random port against its own test database. */
export async function startTestPigeon(
  opts: { env?: Record<string, string>; role?: ProcessRole; databaseUrl?: string } & StartOptions = {},
): Promise<TestPigeon> {
  const databaseUrl = opts.databaseUrl ?? (await createTestDatabase());
  const dataDir = mkdtempSync(join(tmpdir(), 'pigeon-test-data-'));
  const config = loadConfig(
    {
      DATABASE_URL: databaseUrl,
      PIGEON_DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      JOB_POLL_INTERVAL_MS: '200',
      ...TEST_SHARED_SECRETS,
      ...opts.env,
    },
    opts.role ?? 'all',
  );
  const pigeon = await startPigeon(config, createLogger(config.log.level), {
    validateResponses: true,
    ...opts,
  });
  const url = pigeon.url ?? '';
  return {
    ...pigeon,
    url,
    dataDir,
    request: (method, path, init) => request(url, method, path, init),
    stop: async () => {
      await pigeon.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function request(
  base: string,
  method: string,
  path: string,
  init: RequestOptions = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...init.headers };
  let body: string | undefined = init.rawBody;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Asserts the full spec §7 envelope and returns its `error` part (of a `pigeon.request` or `api()` answer). */
export function expectEnvelope(
  res: Pick<TestResponse, 'status' | 'headers'> & { body: unknown; text?: string },
  status: number,
  code: string,
) {
  // biome-ignore lint/suspicious/noExplicitAny: the envelope is read field by field below
  const body = res.body as any;
  const problems: string[] = [];
  if (res.status !== status) problems.push(`status ${res.status} != ${status}`);
  if (body?.success !== false) problems.push('success is not false');
  if (body?.error?.code !== code) problems.push(`code ${body?.error?.code} != ${code}`);
  if (body?.error?.statusCode !== status) problems.push(`error.statusCode ${body?.error?.statusCode} != ${status}`);
  if (typeof body?.error?.message !== 'string' || body.error.message.length === 0) problems.push('no message');
  if (!UUID.test(body?.error?.requestId ?? '')) problems.push('requestId is not a uuid');
  if (body?.error?.requestId !== res.headers.get('x-request-id')) problems.push('requestId != X-Request-ID');
  if (Number.isNaN(Date.parse(body?.timestamp ?? ''))) problems.push('timestamp is not a date');
  if (body?.message !== body?.error?.message) problems.push('top-level message is not error.message');
  if (problems.length)
    throw new Error(`Bad error envelope (${problems.join('; ')}): ${res.text ?? JSON.stringify(body)}`);
  return body.error as {
    code: string;
    message: string;
    errors?: Array<Record<string, unknown>>;
    details?: Record<string, unknown>;
    suggestion?: string;
  };
}
