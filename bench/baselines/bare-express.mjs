// Baseline for GET /health: a bare express 5 app with a `pg` pool answering the same JSON after
// the same `SELECT 1`. Pigeon's CPU per request is compared with this one's.
import { pool, requireServerDep } from './_db.mjs';

const express = requireServerDep('express');
const db = pool();
const startedAt = Date.now();
const app = express();
app.get('/health', async (_req, res) => {
  const database = await db.query('SELECT 1').then(
    () => 'up',
    () => 'down',
  );
  res.json({ status: 'ok', database, version: '0.0.0', uptimeSeconds: Math.round((Date.now() - startedAt) / 1000) });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`bare-express listening on http://127.0.0.1:${server.address().port}`);
});
const stop = () => server.close(() => process.exit(0)) && server.closeAllConnections();
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
