// Helpers of the segment scenarios: creating segments, timing sequential requests, hand-written
// SQL equivalent to a condition (for EXPLAIN), a bounded autocannon run, the change-feed triggers.
import autocannon from 'autocannon';
import { median } from './contacts.mjs';
import { percentile } from './sending.mjs';

export { median, percentile };

export const r1 = (v) => (v === null || v === undefined ? null : Number(v.toFixed(1)));
export const fmt = (v, d = 0) =>
  v === null || v === undefined
    ? '–'
    : v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

/** POST /segments with the secret key; returns the created segment (201). */
export async function createSegment(ctx, body) {
  const t0 = performance.now();
  const res = await ctx.fetch('/segments', { method: 'POST', headers: ctx.auth, json: body });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 201) throw new Error(`POST /segments → ${res.status}: ${text.slice(0, 500)}`);
  return { segment: JSON.parse(text), ms };
}

/**
 * `n` sequential requests (one at a time: no queueing), each timed from the request to its whole
 * body; after `warmup` untimed ones. Returns the milliseconds of each, their median and the last body.
 */
export async function timeSequential(ctx, { method = 'GET', path, n, warmup = 1 }) {
  const ms = [];
  let body;
  for (let i = 0; i < warmup + n; i++) {
    const t0 = performance.now();
    const res = await ctx.fetch(path, { method, headers: ctx.auth });
    const text = await res.text();
    const t = performance.now() - t0;
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 500)}`);
    body = text ? JSON.parse(text) : null;
    if (i >= warmup) ms.push(t);
  }
  return { ms, medianMs: median(ms), minMs: Math.min(...ms), maxMs: Math.max(...ms), body };
}

// ---- hand-written SQL for a condition over `contacts c` ------------------------------------------
// Written as packages/server/src/modules/conditions/operators.ts compiles each operator (the bench
// cannot call the server's compiler); keep them in step. Values are inlined as literals: these
// statements are only EXPLAINed and used as a cross-check of the server's counts.

const literal = (v) => `'${String(v).replaceAll("'", "''")}'`;
const pathLiteral = (path) => literal(`{${path.split('.').join(',')}}`);

/** `data.<path> equals <value>`: containment, so the GIN index on data can serve it. */
export const dataEquals = (path, value) => {
  const nested = path.split('.').reduceRight((inner, key) => ({ [key]: inner }), value);
  return `c.data @> ${literal(JSON.stringify(nested))}::jsonb`;
};

/** `data.<path> greaterThan | lessThan | … <number>`: numbers only, anything else never matches. */
export const dataCompare = (path, how, number) => {
  const at = `(c.data #> ${pathLiteral(path)}::text[])`;
  return `COALESCE(CASE WHEN jsonb_typeof(${at}) = 'number' THEN ${at}::numeric ${how} ${Number(number)}::numeric END, false)`;
};

/** `event.<name> triggered`. */
export const eventTriggered = (name) =>
  `EXISTS (SELECT 1 FROM events e WHERE e.project_id = c.project_id AND e.contact_id = c.id AND e.name = ${literal(name)})`;

/** As the server's: an empty AND is true, an empty OR false. */
export const and = (parts) => (parts.length ? `(${parts.join(' AND ')})` : 'true');
export const or = (parts) => (parts.length ? `(${parts.join(' OR ')})` : 'false');

/**
 * A condition tree (the contract's shape) as one boolean SQL expression, combined as
 * packages/server/src/modules/conditions/tree.ts `compileTree` does: each group ANDs its filters
 * and its nested tree, the groups are joined with the tree's logic. Only the operators the
 * scenarios use: data equals / comparisons, event triggered.
 */
export function conditionSql(tree) {
  const COMPARE = { greaterThan: '>', lessThan: '<', greaterThanOrEqual: '>=', lessThanOrEqual: '<=' };
  const filterSql = ({ field, operator, value }) => {
    if (field.startsWith('data.') && operator === 'equals') return dataEquals(field.slice(5), value);
    if (field.startsWith('data.') && COMPARE[operator]) return dataCompare(field.slice(5), COMPARE[operator], value);
    if (field.startsWith('event.') && operator === 'triggered') return eventTriggered(field.slice(6));
    throw new Error(`conditionSql: ${field} ${operator} is not written here`);
  };
  const groups = tree.groups.map((g) =>
    and([...(g.filters ?? []).map(filterSql), ...(g.conditions ? [conditionSql(g.conditions)] : [])]),
  );
  return (tree.logic ?? 'AND') === 'AND' ? and(groups) : or(groups);
}

/** The count of a condition (a boolean SQL expression over `c`) in the project, as a statement. */
export const countSql = (condition) =>
  `SELECT count(*)::int AS n FROM contacts c WHERE c.project_id = $1 AND ${condition}`;

/**
 * The recount as the server runs it (segments/service.ts `recount`): the count as a subquery of the
 * UPDATE that caches it. A data-modifying statement gets no parallel workers, so this shows what
 * the count costs there ($2 = the segment id).
 */
export const recountSql = (condition) =>
  `UPDATE segments SET member_count = (${countSql(condition)}), member_count_at = now() WHERE id = $2`;

/** A first page of members, newest first (keyset order of the contacts list). */
export const pageSql = (condition, { limit = 20, order = 'DESC' } = {}) =>
  `SELECT c.* FROM contacts c WHERE c.project_id = $1 AND ${condition}
   ORDER BY c.created_at ${order}, c.id ${order} LIMIT ${limit}`;

/**
 * EXPLAIN (ANALYZE, BUFFERS) of a statement on `values` ($1 = the project id by default), run twice
 * (the second, with a warm cache, is kept); the plan is attached and its execution time and scan
 * nodes noted. A data-modifying statement is given `rollback: true`: it runs inside a transaction
 * that is rolled back.
 */
export async function explain(ctx, title, text, { settle = true, values = [ctx.projectId], rollback = false } = {}) {
  if (settle) await new Promise((r) => setTimeout(r, 1000));
  let plan;
  for (let i = 0; i < 2; i++) {
    if (rollback) await ctx.sql('BEGIN');
    try {
      const { rows } = await ctx.sql(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, values);
      plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      if (rollback) await ctx.sql('ROLLBACK');
    }
  }
  const exec = /Execution Time: ([\d.]+) ms/.exec(plan)?.[1];
  const scans = plan
    .split('\n')
    .filter((l) => /Scan|Workers Launched|SubPlan|Join/.test(l))
    .map((l) => l.replace(/^[\s->]+/, '').replace(/\s+\(cost=.*$/, ''))
    .join('; ');
  ctx.note(`EXPLAIN ANALYZE ${title}: ${exec ?? '?'} ms — ${scans}`);
  ctx.attach(
    `EXPLAIN (ANALYZE, BUFFERS), ${title} (hand-written equivalent of the server's query)`,
    `${text}\n\n${plan}`,
  );
  return { plan, executionMs: exec === undefined ? null : Number(exec) };
}

// ---- load -----------------------------------------------------------------------------------------

/**
 * One autocannon run (bounded by `duration` seconds), stopped when the harness stops (Ctrl-C).
 * `started` gets the instance (to stop it early). Returns autocannon's result.
 */
export function runAutocannon(ctx, opts, started) {
  return new Promise((resolve, reject) => {
    if (ctx.signal.aborted) return reject(ctx.signal.reason);
    let instance;
    const abort = () => instance?.stop();
    ctx.signal.addEventListener('abort', abort, { once: true });
    instance = autocannon(opts, (err, result) => {
      ctx.signal.removeEventListener('abort', abort);
      if (ctx.signal.aborted) reject(ctx.signal.reason);
      else if (err) reject(err);
      else resolve(result);
    });
    started?.(instance);
  });
}

// ---- change feed triggers -------------------------------------------------------------------------

/** The triggers that write the change feed (DESIGN.md §8), by table. */
export const FEED_TRIGGERS = [
  { table: 'events', name: 'events_feed' },
  { table: 'contacts', name: 'contacts_feed_insert' },
  { table: 'contacts', name: 'contacts_feed_update' },
];

/** The feed triggers present, with their state (`O` enabled, `D` disabled); throws if one is missing. */
export async function feedTriggers(ctx) {
  const { rows } = await ctx.sql(
    `SELECT t.tgname AS name, t.tgrelid::regclass::text AS "table", t.tgenabled AS enabled
     FROM pg_trigger t WHERE NOT t.tgisinternal AND t.tgrelid IN ('events'::regclass, 'contacts'::regclass)`,
  );
  const missing = FEED_TRIGGERS.filter((f) => !rows.some((r) => r.name === f.name && r.table === f.table));
  if (missing.length)
    throw new Error(
      `change feed triggers missing: ${missing.map((m) => `${m.table}.${m.name}`).join(', ')} ` +
        `(triggers on events/contacts: ${rows.map((r) => `${r.table}.${r.name}`).join(', ') || 'none'})`,
    );
  return rows.filter((r) => FEED_TRIGGERS.some((f) => f.name === r.name));
}

/** ENABLE or DISABLE the three feed triggers (one statement each; waits at most 10 s for locks). */
export async function setFeedTriggers(ctx, enabled) {
  await ctx.sql(`SET lock_timeout = '10s'`);
  try {
    for (const { table, name } of FEED_TRIGGERS)
      await ctx.sql(`ALTER TABLE ${table} ${enabled ? 'ENABLE' : 'DISABLE'} TRIGGER ${name}`);
  } finally {
    await ctx.sql('RESET lock_timeout').catch(() => {});
  }
}

/**
 * Waits (at most `timeoutMs`) until every change-feed consumer has read every change (the
 * `contact_changes` rows past the consumers' cursors), so a seed's backlog (a million inserted
 * contacts are a million changes) is not being worked off during a measurement; then VACUUM
 * ANALYZE contact_changes. Returns the seconds waited, or null when this Pigeon has no change feed.
 */
export async function waitFeedDrained(ctx, timeoutMs = 300_000) {
  const { rows } = await ctx.sql(`SELECT to_regclass('contact_changes') IS NOT NULL AS has`);
  if (!rows[0].has) return null;
  const t0 = performance.now();
  for (;;) {
    const { rows: pending } = await ctx.sql(
      `SELECT EXISTS (SELECT 1 FROM change_feed_cursors cur
         JOIN contact_changes ch ON ch.part = cur.part AND (ch.txid, ch.seq) > (cur.txid, cur.seq)) AS pending`,
    );
    if (!pending[0].pending) {
      // The backlog's rows are dead weight for autovacuum now: vacuumed here rather than in the
      // middle of a measured run.
      await ctx.sql('VACUUM (ANALYZE) contact_changes');
      return (performance.now() - t0) / 1000;
    }
    if (performance.now() - t0 > timeoutMs)
      throw new Error(`change feed still has unread changes after ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
