import { explainList, fmtMs, probe } from '../lib/contacts.mjs';

/**
 * GET /contacts?search=… with 1,000,000 contacts: a few search strings in turn (a specific one,
 * 11 matches; a domain, 1,000; a short one, 10,000). 10 connections: a latency measurement.
 */
const SEARCHES = ['user12345', 'example7.com', '99@'];
/**
 * Probed (unloaded) but not in the load run: every seeded contact matches "example"; "zz" (two
 * characters, no trigram for the index) matches none.
 */
const EXTRA = ['example', 'zz'];
const path = (q) => `/contacts?limit=20&search=${encodeURIComponent(q)}`;

export default {
  name: 'contacts-search-1m',
  description: `GET /contacts?search= ${SEARCHES.map((s) => `"${s}"`).join(', ')} in turn, 1,000,000 contacts`,
  fixtures: ['contacts-1m'],
  connections: 10,
  target: { metric: 'latencyP50Ms', max: 300, unit: 'ms', label: 'search median ≤ 300 ms' },
  async setup(ctx) {
    const measured = await probe(ctx, SEARCHES.map(path), 10);
    const extra = await probe(ctx, EXTRA.map(path), 3);
    ctx.state.probes = measured;
    const show = (qs, ps) => ps.map((p, i) => `"${qs[i]}" ${fmtMs(p.medianMs)} ms (total ${p.total})`).join(', ');
    ctx.note(
      `unloaded (sequential) median per search: ${show(SEARCHES, measured)}; ` +
        `not in the load run: ${show(EXTRA, extra)}`,
    );
  },
  request: (ctx) => ({ requests: SEARCHES.map((q) => ({ method: 'GET', path: path(q), headers: ctx.auth })) }),
  async diagnose(ctx) {
    // The slowest of the measured searches, by the unloaded probe.
    const probes = ctx.state.probes;
    const slowest = probes.reduce((a, b) => (b.medianMs > a.medianMs ? b : a));
    await explainList(ctx, { search: SEARCHES[probes.indexOf(slowest)] });
  },
};
