import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { queryRows, sql } from '../src/db/query.js';
import { newProject } from './accounts.js';
import { api, bodyOf } from './api.js';
import { killAllCli, startCli } from './cli.js';
import { createTestDatabase, type TestPigeon } from './helpers.js';
import { freePort } from './ports.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-procs-'));
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
};
const started = new Set<number>();
afterAll(async () => {
  await killAllCli();
  for (const pid of started) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Alive and not a zombie (an orphan whose exit nobody has collected yet counts as gone). */
function isAlive(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (existsSync('/proc/self/stat')) {
    try {
      return !/^\d+ \(.*\) Z/.test(readFileSync(stat, 'utf8'));
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface WorkerEvent {
  msg: string;
  worker: number;
  pid: number;
  signal?: string | null;
  code?: number | null;
}

/** The supervisor's log lines (pino JSON on stdout) about its worker processes, oldest first. */
function workerEvents(output: string): WorkerEvent[] {
  const events: WorkerEvent[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line);
      if (typeof entry.msg === 'string' && entry.msg.startsWith('worker process') && typeof entry.worker === 'number') {
        events.push(entry);
        if (entry.msg === 'worker process started') started.add(entry.pid);
      }
    } catch {
      // a line of the welcome text
    }
  }
  return events;
}

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pid of the running worker in each slot, once every slot has reported ready. */
function readyWorkers(output: string, count: number): Map<number, number> | undefined {
  const ready = new Map<number, number>();
  for (const event of workerEvents(output)) {
    if (event.msg === 'worker process ready') ready.set(event.worker, event.pid);
    if (event.msg !== 'worker process ready' && event.msg !== 'worker process started') ready.delete(event.worker);
  }
  return ready.size === count ? ready : undefined;
}

async function startPigeonCli(env: Record<string, string>) {
  const run = startCli(['start'], {
    PIGEON_DATA_DIR: env.PIGEON_DATA_DIR ?? tempDir(),
    DATABASE_URL: env.DATABASE_URL ?? (await createTestDatabase()),
    PORT: '0',
    LOG_LEVEL: 'info',
    SHUTDOWN_TIMEOUT_SECONDS: '5',
    ...env,
  });
  const url = await run.ready;
  return { ...run, url };
}

describe('pigeon start with worker processes', () => {
  it("keeps V8's young generation at its initial size through start-up, in the API and the worker process", async () => {
    // Start-up used to grow it to 2 × 16 MB, which an idle process then kept (docs/MEMORY.md).
    const metricsPort = await freePort();
    const pigeon = await startPigeonCli({ WORKER_PROCESSES: '1', METRICS_PORT: String(metricsPort) });
    await waitFor('the worker', () => readyWorkers(pigeon.output(), 1));
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const newSpace = (proc: string) =>
      Number(
        new RegExp(`^pigeon_nodejs_heap_space_size_total_bytes\\{space="new",process="${proc}"\\} (\\d+)`, 'm').exec(
          metrics,
        )?.[1],
      );
    expect(newSpace('api')).toBeGreaterThan(0);
    expect(newSpace('api')).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(newSpace('worker-1')).toBeGreaterThan(0);
    expect(newSpace('worker-1')).toBeLessThanOrEqual(4 * 1024 * 1024);
    pigeon.child.kill('SIGTERM');
    expect(await pigeon.exited).toBe(0);
  });

  it('forks WORKER_PROCESSES workers, replaces one that dies, and stops them all on SIGTERM', async () => {
    const dataDir = tempDir();
    const databaseUrl = await createTestDatabase();
    const pigeon = await startPigeonCli({ PIGEON_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, WORKER_PROCESSES: '2' });
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      expect((await fetch(`${pigeon.url}/health`)).status).toBe(200);
      await waitFor('the workers line', () => pigeon.output().includes('Job workers: 2 processes'));
      const originals = await waitFor('two workers', () => readyWorkers(pigeon.output(), 2));
      const [first, second] = [originals.get(1) as number, originals.get(2) as number];
      expect(first).not.toBe(pigeon.child.pid);
      expect(first).not.toBe(second);
      expect(isAlive(first) && isAlive(second)).toBe(true);
      // Workers run with their old generation capped (WORKER_MAX_OLD_SPACE_MB, 112 by default).
      expect(readFileSync(`/proc/${first}/cmdline`, 'utf8').split('\0')).toContain('--max-old-space-size=112');

      // Both original workers are killed one after the other; each slot gets a new process.
      process.kill(first, 'SIGKILL');
      const afterFirst = await waitFor('a replacement of worker 1', () => {
        const ready = readyWorkers(pigeon.output(), 2);
        return ready && ready.get(1) !== first ? ready : undefined;
      });
      expect(afterFirst.get(2)).toBe(second);
      expect(workerEvents(pigeon.output())).toContainEqual(
        expect.objectContaining({ msg: 'worker process exited; restarting it', pid: first, signal: 'SIGKILL' }),
      );
      process.kill(second, 'SIGKILL');
      const replacements = await waitFor('a replacement of worker 2', () => {
        const ready = readyWorkers(pigeon.output(), 2);
        return ready && ready.get(2) !== second ? ready : undefined;
      });
      const newPids = [...replacements.values()];
      expect(newPids).not.toContain(first);
      expect(newPids).not.toContain(second);
      expect(isAlive(first) || isAlive(second)).toBe(false);

      // Only replacement workers are left: a send is still delivered (local outbox).
      const front = { url: pigeon.url } as TestPigeon;
      const { auth } = await newProject(front);
      const client = api(front, auth);
      const domain = await client.domains.create({ body: { domain: 'procs.example' } });
      expect(bodyOf(domain, 201).status).toBe('verified');
      const sent = await client.emails.send({
        body: { to: 'ada@example.com', from: 'hi@procs.example', subject: 'still working', body: '<p>x</p>' },
      });
      expect(sent.status).toBe(200);
      const emailId = bodyOf(sent, 200).data.emails[0]?.email;
      await waitFor('the email to be delivered', async () => {
        const rows = await queryRows(db, sql`SELECT status FROM emails WHERE id = ${emailId}`);
        return rows[0]?.status === 'SENT';
      });
      const outbox = readdirSync(join(dataDir, 'outbox'))
        .filter((f) => f.endsWith('.eml'))
        .map((f) => readFileSync(join(dataDir, 'outbox', f), 'utf8'));
      expect(outbox.some((m) => m.includes('Subject: still working'))).toBe(true);

      pigeon.child.kill('SIGTERM');
      expect(await pigeon.exited).toBe(0);
      for (const pid of [first, second, ...newPids]) expect(isAlive(pid)).toBe(false);
      const stopped = workerEvents(pigeon.output()).filter((e) => e.msg === 'worker process stopped');
      expect(stopped.map((e) => e.pid).sort()).toEqual([...newPids].sort());
    } finally {
      await db.end();
      await killAllCli();
    }
  }, 60_000);

  it('workers exit when the process that forked them dies', async () => {
    const pigeon = await startPigeonCli({ WORKER_PROCESSES: '1' });
    try {
      const ready = await waitFor('the worker', () => readyWorkers(pigeon.output(), 1));
      const worker = ready.get(1) as number;
      pigeon.child.kill('SIGKILL');
      await pigeon.exited;
      await waitFor('the orphaned worker to exit', () => !isAlive(worker), 15_000);
    } finally {
      await killAllCli();
    }
  }, 40_000);

  it('WORKER_PROCESSES=0 runs the workers in the API process', async () => {
    const pigeon = await startPigeonCli({ WORKER_PROCESSES: '0' });
    try {
      await waitFor('the workers line', () => pigeon.output().includes('Job workers run in this process'));
      expect(pigeon.output()).toContain('delivery loop started');
      expect(workerEvents(pigeon.output())).toEqual([]);
      pigeon.child.kill('SIGTERM');
      expect(await pigeon.exited).toBe(0);
    } finally {
      await killAllCli();
    }
  }, 40_000);
});
