// Helpers of the workflow scenarios (workflow-10k, workflow-waiting): building a workflow through
// the API, seeding contacts, execution counts, paced POST /v1/track, Pigeon's worker processes and
// a full garbage collection in one of them (through the V8 inspector).
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { nodeDescendants } from './campaigns.mjs';
import { cpuSeconds, rssMb } from './process.mjs';

export { nodeDescendants };

/**
 * Builds a workflow through the API as packages/server/test/workflows.ts `buildWorkflow` does:
 * POST /workflows (created disabled), POST /workflows/:id/steps per step (by key), POST
 * /workflows/:id/transitions `[from, to, branch?]`, then PATCH {enabled: true}. Returns
 * `{ id, steps: key → step id }`.
 */
export async function buildWorkflow(ctx, { name, trigger, steps, transitions, allowReentry = false }) {
  const created = await ctx.json('/workflows', {
    method: 'POST',
    headers: ctx.auth,
    json: { name, triggerConfig: { eventName: trigger }, allowReentry },
  });
  const ids = {};
  for (const step of steps) {
    const s = await ctx.json(`/workflows/${created.id}/steps`, {
      method: 'POST',
      headers: ctx.auth,
      json: { type: step.type, name: step.name ?? step.key, config: step.config ?? {} },
    });
    ids[step.key] = s.id;
  }
  for (const [from, to, branch] of transitions) {
    await ctx.json(`/workflows/${created.id}/transitions`, {
      method: 'POST',
      headers: ctx.auth,
      json: { fromStepId: ids[from], toStepId: ids[to], ...(branch ? { branch } : {}) },
    });
  }
  const enabled = await ctx.json(`/workflows/${created.id}`, {
    method: 'PATCH',
    headers: ctx.auth,
    json: { enabled: true },
  });
  if (!enabled.enabled) throw new Error(`workflow ${created.id} is not enabled: ${JSON.stringify(enabled)}`);
  return { id: created.id, steps: ids };
}

/**
 * Waits (at most `timeoutMs`) until Pigeon's worker has registered the change feed's workflow
 * consumer (its cursor rows). Pigeon prints that it is listening before its worker process is up,
 * and a consumer starts at the feed's present when it registers: an event tracked before that is
 * never seen by workflows. Returns the seconds waited.
 */
export async function waitWorkflowConsumer(ctx, timeoutMs = 60_000) {
  const t0 = performance.now();
  for (;;) {
    const { rows } = await ctx.sql(
      `SELECT count(*)::int AS n FROM change_feed_cursors WHERE consumer = 'workflows.triggers'`,
    );
    if (rows[0].n > 0) return (performance.now() - t0) / 1000;
    if (performance.now() - t0 > timeoutMs)
      throw new Error(
        `no change feed cursor of workflows.triggers ${Math.round(timeoutMs / 1000)} s after Pigeon started`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** POST /templates with the secret key; returns its id. */
export async function createTemplate(ctx, body) {
  const t = await ctx.json('/templates', { method: 'POST', headers: ctx.auth, json: body });
  return t.id;
}

/**
 * `count` subscribed contacts in one INSERT … SELECT: `<prefix><i>@<domain>` (i from 0), data
 * `{plan: 'pro', firstName: 'Name<i>'}`; then VACUUM ANALYZE contacts. The caller waits for the
 * change feed (lib/segments.mjs waitFeedDrained) before timing anything.
 */
export async function seedContacts(ctx, { prefix, domain, count }) {
  await ctx.sql(
    `INSERT INTO contacts (id, project_id, email, subscribed, data, created_at, updated_at)
     SELECT uuidv7_compat(), $1::uuid, $2 || i || '@' || $3, true,
            jsonb_build_object('plan', 'pro', 'firstName', 'Name' || i), now(), now()
     FROM generate_series(0, $4::int - 1) AS i`,
    [ctx.projectId, prefix, domain, count],
  );
  await ctx.sql('VACUUM (ANALYZE) contacts');
}

/** Executions of a workflow by status (every status present, 0 when none). */
export async function executionCounts(ctx, workflowId) {
  const { rows } = await ctx.sql(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status = 'RUNNING')::int AS running,
            count(*) FILTER (WHERE status = 'WAITING')::int AS waiting,
            count(*) FILTER (WHERE status = 'COMPLETED')::int AS completed,
            count(*) FILTER (WHERE status = 'EXITED')::int AS exited,
            count(*) FILTER (WHERE status = 'FAILED')::int AS failed,
            count(*) FILTER (WHERE status = 'CANCELLED')::int AS cancelled
     FROM workflow_executions WHERE workflow_id = $1`,
    [workflowId],
  );
  return rows[0];
}

/** The claim statement of packages/server/src/modules/workflows/runner.ts `runOne`: keep them in step. */
export const CLAIM_SQL = `SELECT x.*, w.version, w.name AS workflow_name FROM workflow_executions x
  JOIN workflows w ON w.id = x.workflow_id
  WHERE x.status IN ('RUNNING', 'WAITING') AND x.wake_at <= now()
  ORDER BY x.wake_at LIMIT 1 FOR UPDATE OF x SKIP LOCKED`;

/**
 * The SELECT of packages/server/src/modules/workflows/executions.ts `startFromEvents` (its
 * `candidates` CTE: which (workflow, contact) a batch of the change feed starts), for EXPLAIN.
 * $1 = project id, $2 = the batch's event ids. Keep it in step with the server's statement.
 */
export const START_CANDIDATES_SQL = `SELECT DISTINCT ON (w.id, e.contact_id) w.id AS workflow_id, w.allow_reentry, e.contact_id,
         e.id AS event_id, e.name, e.data
  FROM events e
  JOIN workflows w ON w.project_id = e.project_id AND w.enabled AND w.trigger_event = e.name
  JOIN contacts ct ON ct.id = e.contact_id
  WHERE e.project_id = $1::uuid AND e.id = ANY($2::uuid[])
  ORDER BY w.id, e.contact_id, e.created_at, e.id`;

/** The subquery of `resumeWaiting` in the same file (the events of a batch), for EXPLAIN. */
export const RESUME_EVENTS_SQL = `SELECT DISTINCT ON (contact_id, name) id, contact_id, name, data, created_at FROM events
  WHERE project_id = $1::uuid AND id = ANY($2::uuid[])
  ORDER BY contact_id, name, created_at, id`;

/**
 * CPU seconds and RSS of each of Pigeon's node processes (the main / API one and its worker
 * children, `pigeon worker`) and its PostgreSQL (every other descendant, summed). `at` is
 * performance.now(). Two snapshots give per-role CPU over a window (see `cpuWindow`).
 */
export function processSnapshot(ctx) {
  const main = ctx.pigeonPid;
  const workers = nodeDescendants(main);
  const cpu = {};
  const rss = {};
  for (const pid of [main, ...workers]) {
    try {
      cpu[pid] = cpuSeconds(pid);
      rss[pid] = rssMb(pid);
    } catch {} // gone meanwhile
  }
  const c = ctx.cpu();
  const workerCpu = workers.reduce((n, p) => n + (cpu[p] ?? 0), 0);
  return {
    at: c.at,
    main,
    workers,
    cpu,
    rss,
    pigeon: c.pigeon,
    workerCpu,
    // ctx.cpu().db counts every descendant of the main process: the workers and PostgreSQL.
    db: c.db - workerCpu,
    sink: c.sink,
    machine: c.machine,
    harness: c.harness,
  };
}

/**
 * % of a core per role between two snapshots: main (API) process, worker processes (only those
 * alive at both ends), PostgreSQL, SMTP sink, the harness, and the rest of the machine.
 */
export function cpuWindow(a, b) {
  const wall = (b.at - a.at) / 1000;
  const pct = (v) => (v === null || Number.isNaN(v) ? null : Number(((v / wall) * 100).toFixed(2)));
  const both = b.workers.filter((p) => p in a.cpu && p in b.cpu);
  const worker = both.reduce((n, p) => n + (b.cpu[p] - a.cpu[p]), 0);
  const main = b.pigeon - a.pigeon;
  const db = b.db - a.db;
  const sink = a.sink === null || b.sink === null ? 0 : b.sink - a.sink;
  const harness = b.harness - a.harness;
  const other = Math.max(0, b.machine - a.machine - main - (b.workerCpu - a.workerCpu) - db - sink - harness);
  return {
    seconds: Number(wall.toFixed(2)),
    mainCpuSeconds: Number(main.toFixed(2)),
    workerCpuSeconds: Number(worker.toFixed(2)),
    dbCpuSeconds: Number(db.toFixed(2)),
    mainCpuPercentOfCore: pct(main),
    workerCpuPercentOfCore: pct(worker),
    perWorkerCpuPercentOfCore: Object.fromEntries(both.map((p) => [p, pct(b.cpu[p] - a.cpu[p])])),
    dbCpuPercentOfCore: pct(db),
    sinkCpuPercentOfCore: a.sink === null ? null : pct(sink),
    harnessCpuPercentOfCore: pct(harness),
    otherCpuPercentOfCore: pct(other),
  };
}

/**
 * `total` POST /v1/track requests, open loop at a steady `rate` per second (request i is due at
 * start + i ÷ rate; `rate` Infinity: as fast as `maxInFlight` allows), at most `maxInFlight` at
 * once over keep-alive node:http connections (lighter on the harness's CPU than fetch, and
 * without autocannon's burst at the start of every second). `body(i)` gives request i's JSON
 * body. Per request: `dueAt`, `sentAt`, `answeredAt` (epoch ms), `status`. A request that could
 * not go at its due time because `maxInFlight` were still out counts in `late` (the server fell
 * behind the rate). `onAnswer(r)` is called as each one completes. Stops early when `signal` aborts.
 */
export async function pacedTracks(ctx, { total, rate, maxInFlight = 32, body, headers = ctx.auth, onAnswer }) {
  const url = new URL('/v1/track', ctx.baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: maxInFlight });
  const now = () => performance.timeOrigin + performance.now();
  const results = new Array(total);
  let inFlight = 0;
  let late = 0;
  let next = 0;
  let failure = null;
  const start = now();
  const post = (i) =>
    new Promise((resolve) => {
      const payload = JSON.stringify(body(i));
      const r = { i, dueAt: start + (Number.isFinite(rate) ? (i * 1000) / rate : 0), sentAt: now() };
      results[i] = r;
      const req = http.request(
        url,
        {
          method: 'POST',
          agent,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c) => {
            if (res.statusCode !== 200) text += c;
          });
          res.on('end', () => {
            r.answeredAt = now();
            r.status = res.statusCode;
            if (res.statusCode !== 200) r.error = text.slice(0, 300);
            onAnswer?.(r);
            resolve();
          });
        },
      );
      req.on('error', (err) => {
        r.answeredAt = now();
        r.status = 0;
        r.error = err.message;
        onAnswer?.(r);
        resolve();
      });
      req.end(payload);
    });
  await new Promise((resolve) => {
    let wakeup = null;
    const pump = () => {
      wakeup = null;
      if (ctx.signal.aborted) failure ??= ctx.signal.reason;
      while (!failure && next < total && inFlight < maxInFlight) {
        const due = start + (Number.isFinite(rate) ? (next * 1000) / rate : 0);
        const wait = due - now();
        if (wait > 1) {
          wakeup = setTimeout(pump, Math.min(wait, 50));
          return;
        }
        if (wait < -50) late++;
        const i = next++;
        inFlight++;
        post(i).then(() => {
          inFlight--;
          if (!wakeup) pump();
        });
      }
      if ((next >= total || failure) && inFlight === 0) resolve();
    };
    pump();
  });
  agent.destroy();
  if (failure) throw failure;
  return { results, late, startedAt: start };
}

// ---- a full garbage collection in a running Pigeon process, through the V8 inspector ----------

/**
 * The TCP ports `pid` listens on (IPv4 and IPv6), from its socket inodes and /proc/<pid>/net/tcp*.
 */
function listeningPorts(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {} // closed meanwhile
  }
  const ports = new Set();
  for (const file of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${file}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[3] === '0A' && inodes.has(f[9])) ports.add(Number.parseInt(f[1].split(':')[1], 16));
    }
  }
  return ports;
}

const inspectorPorts = new Map(); // pid → port

/**
 * Opens the inspector of a running node process (SIGUSR1, as `node inspect -p <pid>` does; start
 * Pigeon with NODE_OPTIONS=--inspect-port=0 so it listens on a free port) and returns its port: the
 * listening socket that appeared. Once per process.
 */
export async function openInspector(pid) {
  if (inspectorPorts.has(pid)) return inspectorPorts.get(pid);
  const before = listeningPorts(pid);
  process.kill(pid, 'SIGUSR1');
  const deadline = Date.now() + 5000;
  for (;;) {
    const fresh = [...listeningPorts(pid)].filter((p) => !before.has(p));
    if (fresh.length === 1) {
      inspectorPorts.set(pid, fresh[0]);
      return fresh[0];
    }
    if (Date.now() > deadline)
      throw new Error(`pid ${pid}: no inspector port 5 s after SIGUSR1 (${fresh.length} new ports)`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A minimal Chrome DevTools Protocol client over a WebSocket (node:net, RFC 6455 text frames:
 * Node 20 has no WebSocket client): `send(method, params)` resolves with the result.
 */
async function cdpSession(port) {
  const [target] = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const url = new URL(target.webSocketDebuggerUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(
    `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  let buf = Buffer.alloc(0);
  let upgraded = false;
  let message = [];
  const pending = new Map();
  let nextId = 1;
  let failed = null;
  const fail = (err) => {
    failed ??= err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  const handshake = new Promise((resolve, reject) => {
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        if (!/^HTTP\/1\.1 101/.test(head))
          return reject(new Error(`inspector refused the WebSocket: ${head.split('\r\n')[0]}`));
        upgraded = true;
        buf = buf.subarray(end + 4);
        resolve();
      }
      // Server frames are unmasked.
      for (;;) {
        if (buf.length < 2) return;
        const fin = (buf[0] & 0x80) !== 0;
        const opcode = buf[0] & 0x0f;
        let len = buf[1] & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        if (buf.length < off + len) return;
        const payload = buf.subarray(off, off + len);
        buf = buf.subarray(off + len);
        if (opcode === 0x8) return fail(new Error('inspector closed the WebSocket'));
        if (opcode !== 0x1 && opcode !== 0x0) continue; // ping/pong/binary: not used by the inspector
        message.push(payload);
        if (!fin) continue;
        const msg = JSON.parse(Buffer.concat(message).toString('utf8'));
        message = [];
        const p = pending.get(msg.id);
        if (!p) continue; // an event
        pending.delete(msg.id);
        if (msg.error) p.reject(new Error(`${p.method}: ${msg.error.message}`));
        else p.resolve(msg.result);
      }
    });
    socket.on('error', (err) => {
      reject(err);
      fail(err);
    });
    socket.on('close', () => fail(new Error('inspector connection closed')));
  });
  await handshake;
  const frame = (text) => {
    const payload = Buffer.from(text, 'utf8');
    const mask = randomBytes(4);
    const head =
      payload.length < 126
        ? Buffer.from([0x81, 0x80 | payload.length])
        : payload.length < 65536
          ? Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff])
          : (() => {
              const h = Buffer.alloc(10);
              h[0] = 0x81;
              h[1] = 0x80 | 127;
              h.writeBigUInt64BE(BigInt(payload.length), 2);
              return h;
            })();
    for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4];
    return Buffer.concat([head, mask, payload]);
  };
  return {
    send(method, params = {}) {
      if (failed) return Promise.reject(failed);
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject, method });
        socket.write(frame(JSON.stringify({ id, method, params })));
      });
    },
    close() {
      socket.end(Buffer.from([0x88, 0x80, 0, 0, 0, 0])); // a masked close frame
      socket.destroy();
    },
  };
}

/**
 * A full garbage collection in node process `pid` (HeapProfiler.collectGarbage, twice, through
 * its inspector), then its V8 heap (`Runtime.getHeapUsage`) and, `settleMs` later, its RSS: what
 * the process holds with no garbage, independent of when V8 would have collected on its own.
 */
export async function collectGarbage(pid, { settleMs = 1000 } = {}) {
  const port = await openInspector(pid);
  const cdp = await cdpSession(port);
  try {
    const rssBefore = rssMb(pid);
    await cdp.send('HeapProfiler.collectGarbage');
    await cdp.send('HeapProfiler.collectGarbage');
    const heap = await cdp.send('Runtime.getHeapUsage');
    await new Promise((r) => setTimeout(r, settleMs));
    return {
      rssMbBefore: rssBefore,
      rssMb: rssMb(pid),
      heapUsedMb: heap.usedSize / 2 ** 20,
      heapTotalMb: heap.totalSize / 2 ** 20,
    };
  } finally {
    cdp.close();
  }
}
