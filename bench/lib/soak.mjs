// What the soak scenario samples: open-loop paced requests with their latencies per minute, and the
// database's tables (size, indexes, dead tuples, deletes, autovacuum runs) grouped by partitioned parent.
import http from 'node:http';
import { percentile } from './sending.mjs';

/**
 * Requests at a steady `rate` per second (request i due at start + i ÷ rate, open loop) until
 * `stopped()` says so, at most `maxInFlight` out at once over keep-alive node:http connections. A
 * request that could not go when due (all `maxInFlight` still out) counts as late. `make(i)` gives
 * `{ path, headers, body }`; `onAnswer({ ms, status, error, at })` gets each answer (at: epoch ms;
 * status 0 with the error's code when no answer came).
 */
export function pacedLoad(ctx, { rate, maxInFlight = 64, make, onAnswer, stopped }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: maxInFlight });
  const start = performance.now();
  let next = 0;
  let inFlight = 0;
  let late = 0;
  return new Promise((resolve) => {
    const fire = (i) => {
      const { path, headers, body } = make(i);
      const payload = JSON.stringify(body);
      const sentAt = performance.now();
      inFlight++;
      const done = (status, error) => {
        inFlight--;
        onAnswer({ ms: performance.now() - sentAt, status, error, at: performance.timeOrigin + performance.now() });
      };
      const req = http.request(
        new URL(path, ctx.baseUrl),
        {
          method: 'POST',
          agent,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        },
        (res) => {
          res.resume();
          res.on('end', () => done(res.statusCode));
        },
      );
      req.on('error', (err) => done(0, err.code ?? err.message));
      req.end(payload);
    };
    const pump = () => {
      if (stopped() || ctx.signal.aborted) {
        const drain = () => {
          if (inFlight > 0) return setTimeout(drain, 20);
          agent.destroy();
          resolve({ sent: next, late });
        };
        return drain();
      }
      const due = Math.floor(((performance.now() - start) / 1000) * rate);
      while (next < due) {
        if (inFlight >= maxInFlight) {
          late += due - next;
          next = due;
          break;
        }
        fire(next++);
      }
      setTimeout(pump, 5);
    };
    pump();
  });
}

/** Latency samples kept per minute of the run: p50/p99/max and counts of one minute, or of several. */
export class PerMinute {
  constructor(startAt) {
    this.startAt = startAt;
    this.minutes = [];
  }
  add({ ms, status, error, at }) {
    const m = Math.floor((at - this.startAt) / 60_000);
    this.minutes[m] ??= { ms: [], errors: 0, statuses: {} };
    const bucket = this.minutes[m];
    if (status >= 200 && status < 300) bucket.ms.push(ms);
    else {
      bucket.errors++;
      const key = status === 0 ? `0 ${error}` : status;
      bucket.statuses[key] = (bucket.statuses[key] ?? 0) + 1;
    }
  }
  /** Summary of minutes [from, to). */
  window(from, to) {
    const ms = this.minutes
      .slice(from, to)
      .flatMap((b) => b?.ms ?? [])
      .sort((a, b) => a - b);
    const errors = this.minutes.slice(from, to).reduce((n, b) => n + (b?.errors ?? 0), 0);
    // Answers other than 2xx by status ("0 ECONNRESET": no answer, and why).
    const statuses = {};
    for (const b of this.minutes.slice(from, to))
      for (const [code, n] of Object.entries(b?.statuses ?? {})) statuses[code] = (statuses[code] ?? 0) + n;
    const round = (v) => (v === null ? null : Number(v.toFixed(1)));
    return {
      n: ms.length,
      errors,
      statuses,
      p50: round(percentile(ms, 50)),
      p99: round(percentile(ms, 99)),
      max: round(ms.at(-1) ?? null),
    };
  }
}

/**
 * Every table of the database by its partitioned parent (a partition counts in its parent):
 * bytes with indexes and TOAST, index bytes, live and dead tuples, rows deleted so far, autovacuum
 * runs so far.
 */
export async function tableStats(ctx) {
  const { rows } = await ctx.sql(
    `SELECT coalesce(parent.relname, c.relname) AS name,
            sum(pg_total_relation_size(c.oid))::bigint AS bytes, sum(pg_indexes_size(c.oid))::bigint AS index_bytes,
            sum(s.n_live_tup)::bigint AS live, sum(s.n_dead_tup)::bigint AS dead, sum(s.n_tup_del)::bigint AS deleted,
            sum(s.autovacuum_count)::bigint AS autovacuums
     FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
     LEFT JOIN pg_inherits i ON i.inhrelid = c.oid LEFT JOIN pg_class parent ON parent.oid = i.inhparent
     GROUP BY 1`,
  );
  return Object.fromEntries(
    rows.map((r) => [
      r.name,
      {
        bytes: Number(r.bytes),
        indexBytes: Number(r.index_bytes),
        live: Number(r.live),
        dead: Number(r.dead),
        deleted: Number(r.deleted),
        autovacuums: Number(r.autovacuums),
      },
    ]),
  );
}

/** The sum of one field over every table. */
export const sumOf = (tables, field) => Object.values(tables).reduce((n, t) => n + t[field], 0);
