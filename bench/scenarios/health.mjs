/**
 * GET /health: Express + ts-rest routing, request id, logging and one `SELECT 1` per request.
 * Baseline: a bare express 5 app with a `pg` pool answering the same JSON after the same query.
 */
export default {
  name: 'health',
  description: 'GET /health (one SELECT 1 per request)',
  baseline: 'bare-express',
  target: {
    metric: 'cpuRatio',
    max: 1.3,
    unit: '×',
    digits: 2,
    label: 'CPU per request ≤ 1.3× the bare express app (same run)',
  },
  request: () => ({ method: 'GET', path: '/health' }),
};
