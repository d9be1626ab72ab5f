// A webhook receiver for the event-webhook bench, in its own process (its CPU is not Pigeon's nor
// the harness's): answers every POST with 204 at once and counts deliveries by `webhook-id`.
// GET /stats → { count, distinct, duplicates, firstAt, lastAt } (epoch ms); POST /reset clears them.
import { createServer } from 'node:http';

let ids = new Set();
let count = 0;
let firstAt = null;
let lastAt = null;

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ count, distinct: ids.size, duplicates: count - ids.size, firstAt, lastAt }));
    return;
  }
  if (req.method === 'POST' && req.url === '/reset') {
    ids = new Set();
    count = 0;
    firstAt = null;
    lastAt = null;
    res.end();
    return;
  }
  req.resume();
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    count++;
    ids.add(String(req.headers['webhook-id']));
    firstAt ??= at;
    lastAt = at;
    res.statusCode = 204;
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
