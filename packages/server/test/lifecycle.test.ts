import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { killAllCli, runCli, startCli } from './cli.js';
import { createTestDatabase } from './helpers.js';
import { freePort } from './ports.js';
import { until } from './until.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-life-'));
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  await killAllCli();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function query(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('pigeon start on the embedded defaults', () => {
  it('keeps data across a restart, re-runs no migration, and stops PostgreSQL on SIGTERM', async () => {
    const dataDir = tempDir();
    const env = {
      PIGEON_DATA_DIR: dataDir,
      PORT: String(await freePort()),
      EMBEDDED_POSTGRES_PORT: String(await freePort()),
    };
    const first = startCli(['start'], env);
    const url = await first.ready;
    expect((await fetch(`${url}/health`)).status).toBe(200);
    // First start on an empty database: a local owner, a project, its keys and a curl to paste.
    const welcome = first.output();
    const secretKey = /Secret key.*?(sk_[0-9a-f]{64})/.exec(welcome)?.[1];
    expect(welcome).toMatch(/Console: {2}http:\/\/localhost:\d+\/app\/ {2}\(sign in as\s+owner@pigeon\.local/);
    expect(welcome).toMatch(
      /curl -X POST http:\/\/localhost:\d+\/v1\/track -H "Authorization: Bearer pk_[0-9a-f]{64}"/,
    );
    expect(readFileSync(join(dataDir, 'first-run.txt'), 'utf8')).toContain(secretKey);
    // …and a ready curl for /v1/send: the local outbox verified the first project's domain at once.
    const sendCurl = welcome.split('\n').find((line) => line.startsWith(`curl -X POST ${url}/v1/send`));
    expect(welcome).toContain(`see it at ${url}/outbox`);
    const sent = JSON.parse((await promisify(execFile)('sh', ['-c', `${sendCurl} -s`])).stdout);
    expect(sent).toMatchObject({ success: true, data: { emails: [{ contact: { email: 'ada@example.com' } }] } });
    const secrets = JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8'));
    const dbUrl = `postgres://pigeon:${secrets.embeddedPostgresPassword}@127.0.0.1:${env.EMBEDDED_POSTGRES_PORT}/pigeon`;
    await query(dbUrl, "CREATE TABLE restart_probe (v text); INSERT INTO restart_probe VALUES ('kept')");
    const migrationsBefore = await query(dbUrl, 'SELECT name FROM mikro_orm_migrations ORDER BY id');

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    await expect(query(dbUrl, 'SELECT 1')).rejects.toThrow(); // its PostgreSQL is gone too

    const migrate = await runCli(['migrate'], env);
    expect(migrate.code).toBe(0);
    expect(migrate.stdout).toContain('up to date');
    // An admin command's logs (here: the embedded PostgreSQL starting) go to stderr; stdout is its answer.
    const status = await runCli(['status', '--json'], { ...env, LOG_LEVEL: 'info' });
    expect(status.stderr).toContain('embedded PostgreSQL started');
    expect(JSON.parse(status.stdout)).toHaveProperty('queue');

    const second = startCli(['start'], env);
    await second.ready;
    expect(second.output()).toContain('first-run.txt');
    expect(second.output()).not.toContain('sk_');
    const keys = await runCli(['keys'], env);
    expect(keys.stdout).toContain(secretKey);
    const third = await runCli(['start'], { ...env, PORT: String(await freePort()) });
    expect(third.code).toBe(1);
    expect(third.stderr).toContain('already running');
    expect(await query(dbUrl, 'SELECT v FROM restart_probe')).toEqual([{ v: 'kept' }]); // still up
    expect(await query(dbUrl, 'SELECT v FROM restart_probe')).toEqual([{ v: 'kept' }]);
    expect(await query(dbUrl, 'SELECT name FROM mikro_orm_migrations ORDER BY id')).toEqual(migrationsBefore);
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
  }, 120_000);
});

/** Pids the supervisor logged for its API process becoming ready, oldest first. */
const readyApiPids = (output: string): number[] =>
  output
    .split('\n')
    .filter((line) => line.includes('"api process ready"'))
    .map((line) => JSON.parse(line).pid as number);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

const postmasterPid = (dataDir: string) =>
  Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);

describe('pigeon start supervises its API process', () => {
  it('runs the API with a heap limit, starts it again when it dies, and leaves no PostgreSQL behind when killed', async () => {
    const dataDir = tempDir();
    const env = {
      PIGEON_DATA_DIR: dataDir,
      PORT: String(await freePort()),
      EMBEDDED_POSTGRES_PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      WORKER_PROCESSES: '1',
    };
    const run = startCli(['start'], env);
    const url = await run.ready;
    const [api] = await until(
      () => readyApiPids(run.output()),
      (pids) => pids.length === 1,
    );
    expect(api).toBeDefined();
    expect(api).not.toBe(run.child.pid);
    expect(readFileSync(`/proc/${api}/cmdline`, 'utf8').split('\0')).toContain('--max-old-space-size=768');

    // The API process dies as an out-of-memory abort would end it: it is started again.
    const firstPostgres = postmasterPid(dataDir);
    process.kill(api as number, 'SIGKILL');
    const pids = await until(
      () => readyApiPids(run.output()),
      (p) => p.length === 2,
      60_000,
    );
    expect(pids).toHaveLength(2);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect(alive(firstPostgres)).toBe(false); // the dead API's PostgreSQL was stopped, a new one runs
    const secondPostgres = postmasterPid(dataDir);
    expect(alive(secondPostgres)).toBe(true);

    // Everything killed at once (no process gets to clean up): PostgreSQL does not stay orphaned.
    process.kill(run.child.pid as number, 'SIGKILL');
    process.kill(pids[1] as number, 'SIGKILL');
    await run.exited;
    expect(
      await until(
        () => alive(secondPostgres),
        (up) => !up,
        15_000,
      ),
    ).toBe(false);
  }, 120_000);

  it("does not start again an API process that failed to start: its exit code is the command's", async () => {
    const port = await freePort();
    const blocker = startCli(['api'], {
      PIGEON_DATA_DIR: tempDir(),
      DATABASE_URL: await createTestDatabase(),
      PORT: String(port),
    });
    await blocker.ready;
    const run = await runCli(['start'], {
      PIGEON_DATA_DIR: tempDir(),
      DATABASE_URL: await createTestDatabase(),
      PORT: String(port),
      WORKER_PROCESSES: '0',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`PORT ${port} is already in use`);
    blocker.child.kill('SIGTERM');
    expect(await blocker.exited).toBe(0);
  }, 60_000);
});

describe('pigeon command line', () => {
  it('stops with a message naming the bad variable', async () => {
    const run = await runCli(['start'], { PIGEON_DATA_DIR: tempDir(), PORT: 'not-a-port' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('PORT');
    expect(run.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
  });

  it('gives a clear error when the database is down at start-up', async () => {
    const port = await freePort();
    const run = await runCli(['start'], {
      PIGEON_DATA_DIR: tempDir(),
      DATABASE_URL: `postgres://nobody:secret@127.0.0.1:${port}/pigeon`,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Cannot connect to PostgreSQL');
    expect(run.stderr).not.toContain('secret'); // password redacted
    expect(run.stderr).not.toContain('Unhandled');
  });

  it('runs api and worker processes against one database', async () => {
    const databaseUrl = await createTestDatabase();
    const worker = startCli(['worker'], { PIGEON_DATA_DIR: tempDir(), DATABASE_URL: databaseUrl });
    const api = startCli(['api'], {
      PIGEON_DATA_DIR: tempDir(),
      DATABASE_URL: databaseUrl,
      PORT: String(await freePort()),
    });
    const [, url] = await Promise.all([worker.ready, api.ready]);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    api.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    expect(await api.exited).toBe(0);
    expect(await worker.exited).toBe(0);
  }, 60_000);

  it('creates a user with a project from the command line, and disables the project', async () => {
    const env = { PIGEON_DATA_DIR: tempDir(), DATABASE_URL: await createTestDatabase() };
    const created = await runCli(
      ['create-user', '--email', 'Ops@Example.com', '--password', 'long enough', '--project', 'Ops'],
      env,
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('ops@example.com');
    const projectId = /Project: {2}Ops \(([0-9a-f-]{36})\)/.exec(created.stdout)?.[1];
    expect(projectId).toBeDefined();
    const disabled = await runCli(['project', 'disable', projectId ?? '', '--reason', 'testing'], env);
    expect(disabled.stdout).toContain('disabled');
    const keys = (await runCli(['keys'], env)).stdout;
    expect(keys).toContain('Ops');
    expect(keys).toContain('[disabled]');
    const bad = await runCli(['create-user', '--email', 'nope', '--password', 'x'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--email');
    // Four CLI processes, each a Node start that loads the whole bundle: 5 to 7 s each at a load
    // average of 19 on two cores, where the default 30 s ran out.
  }, 60_000);

  it('rejects an unknown command', async () => {
    const run = await runCli(['fly'], { PIGEON_DATA_DIR: tempDir() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Unknown command');
  });
});
