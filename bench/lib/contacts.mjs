// Helpers of the contacts scenarios: an unloaded latency probe and EXPLAIN ANALYZE of the list query.

/** Median of the numbers. */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Sequential GETs of each path (one at a time, so no queueing), `n` times each: median and max
 * milliseconds including the body. A diagnostic next to the loaded autocannon numbers.
 */
export async function probe(ctx, paths, n = 10) {
  const out = [];
  for (const path of paths) {
    const ms = [];
    let body;
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const res = await ctx.fetch(path, { headers: ctx.auth });
      const text = await res.text();
      ms.push(performance.now() - t0);
      if (!res.ok) throw new Error(`GET ${path} → ${res.status}: ${text.slice(0, 300)}`);
      body = JSON.parse(text);
    }
    out.push({ path, medianMs: median(ms), maxMs: Math.max(...ms), rows: body.data?.length, total: body.total, body });
  }
  return out;
}

export const fmtMs = (v) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));

// The two statements of GET /contacts (first page, sort createdAt desc), as in
// packages/server/src/modules/contacts/list.ts; keep them in step with it.
const likeParam = (search) =>
  `%${search
    .trim()
    .toLowerCase()
    .replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;

export function listStatements(projectId, { search, limit = 20 } = {}) {
  const values = [projectId];
  const filters = ['project_id = $1'];
  if (search) {
    values.push(likeParam(search));
    filters.push(`email LIKE $${values.length}`);
  }
  return [
    {
      label: 'page',
      text: `SELECT *, created_at::text AS sort_value FROM contacts WHERE ${filters.join(' AND ')}
             ORDER BY created_at DESC, id DESC LIMIT $${values.length + 1}`,
      values: [...values, limit + 1],
    },
    { label: 'total', text: `SELECT count(*)::int AS n FROM contacts WHERE ${filters.join(' AND ')}`, values },
  ];
}

/**
 * EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) of both statements of a first page; each plan is
 * attached to the report and its execution time noted. Runs after the load has drained (requests
 * still in flight when autocannon stops keep the database busy for a moment), each statement
 * twice, keeping the second. TIMING OFF: per-node clock reads cost a lot here (a count over 1M rows
 * took 86 ms with them, 65 ms without); the nodes still show their actual row counts.
 */
export async function explainList(ctx, options = {}) {
  const what = options.search ? `search "${options.search}"` : 'first page';
  await new Promise((r) => setTimeout(r, 2000));
  for (const st of listStatements(ctx.projectId, options)) {
    let plan;
    for (let i = 0; i < 2; i++) {
      const { rows } = await ctx.sql(`EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) ${st.text}`, st.values);
      plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    }
    const exec = /Execution Time: ([\d.]+) ms/.exec(plan)?.[1];
    const scans = plan
      .split('\n')
      .filter((l) => /Scan|Sort Method|Workers Launched/.test(l))
      .map((l) => l.replace(/^[\s->]+/, '').replace(/\s+\(cost=.*$/, ''))
      .join('; ');
    ctx.note(`EXPLAIN ANALYZE ${what}, ${st.label} query: ${exec ?? '?'} ms — ${scans}`);
    ctx.attach(`EXPLAIN (ANALYZE, BUFFERS, TIMING OFF), ${what}, ${st.label} query`, plan);
  }
}
