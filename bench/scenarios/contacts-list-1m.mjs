import { explainList, fmtMs, probe } from '../lib/contacts.mjs';

/**
 * GET /contacts?limit=20 with 1,000,000 contacts in the project: the first page (newest first),
 * which also counts `total`. 10 connections: a latency measurement, its p50 is the median.
 */
export default {
  name: 'contacts-list-1m',
  description: 'GET /contacts?limit=20 (first page with total), 1,000,000 contacts',
  fixtures: ['contacts-1m'],
  connections: 10,
  target: { metric: 'latencyP50Ms', max: 20, unit: 'ms', label: 'first page median ≤ 20 ms' },
  async setup(ctx) {
    // Unloaded, one request at a time: page 1 (with total) and page 2 (cursor, no count).
    const [first] = await probe(ctx, ['/contacts?limit=20'], 10);
    if (first.rows !== 20 || first.total < 1_000_000)
      throw new Error(`unexpected first page: ${first.rows} rows, total ${first.total}`);
    const [second] = await probe(ctx, [`/contacts?limit=20&cursor=${encodeURIComponent(first.body.cursor)}`], 10);
    ctx.note(
      `unloaded (sequential) median: first page ${fmtMs(first.medianMs)} ms (total ${first.total.toLocaleString('en-US')}), ` +
        `second page ${fmtMs(second.medianMs)} ms (cursor, no count)`,
    );
  },
  request: (ctx) => ({ method: 'GET', path: '/contacts?limit=20', headers: ctx.auth }),
  diagnose: (ctx) => explainList(ctx),
};
