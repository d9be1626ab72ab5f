/** GET /health: Express + ts-rest routing, request id, ORM context and one `SELECT 1`. */
export default {
  name: 'health',
  description: 'GET /health (one SELECT 1 per request)',
  baseline: 'bare-http',
  request: () => ({ method: 'GET', path: '/health' }),
};
