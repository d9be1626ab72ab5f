import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { pendingMigrations } from '../src/db/migrate.js';
import { MIGRATIONS } from '../src/db/migrations/index.js';
import { adminQuery, withDatabase } from './global-setup.js';

/** The built migrator process (`db/migrate.ts` forks it at start when a migration is pending). */
const CHILD = fileURLToPath(new URL('../dist/migrate-child.js', import.meta.url));

/** Forks the migrator, sends it `message` (unless undefined), and gathers its answer and exit. */
function runChild(message: { url: string; logLevel: string } | undefined) {
  const child = fork(CHILD, [], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const answers: unknown[] = [];
  child.on('message', (m) => answers.push(m));
  if (message) child.send(message);
  else child.disconnect(); // the parent went away before asking
  // 'close' waits for every message; a channel the parent closed itself never reports it.
  return new Promise<{ code: number | null; answers: unknown[] }>((resolve) =>
    child.on(message ? 'close' : 'exit', (code) => resolve({ code, answers })),
  );
}

describe('the migrator process', () => {
  it('applies every migration to an empty database, answers their names and exits 0', async () => {
    const admin = inject('adminDatabaseUrl');
    const name = `pigeon_child_${randomUUID().replace(/-/g, '')}`;
    await adminQuery(admin, `CREATE DATABASE ${name}`);
    const url = withDatabase(admin, name);
    const { code, answers } = await runChild({ url, logLevel: 'warn' });
    expect(code).toBe(0);
    expect(answers).toEqual([{ applied: MIGRATIONS.map((m) => m.name) }]);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      expect(await pendingMigrations(pool)).toEqual([]);
    } finally {
      await pool.end();
    }
  });

  it('answers why it failed and exits 1 when the database cannot be reached', async () => {
    const { code, answers } = await runChild({ url: 'postgres://nobody:x@127.0.0.1:1/none', logLevel: 'warn' });
    expect(code).toBe(1);
    expect(answers).toEqual([{ error: expect.stringMatching(/ECONNREFUSED|connect/) }]);
  });

  it('exits at once when its parent goes away', async () => {
    const { code, answers } = await runChild(undefined);
    expect(code).toBe(1);
    expect(answers).toEqual([]);
  });
});
