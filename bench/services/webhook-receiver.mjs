// A webhook receiver for the event-webhook bench, in its own process (its CPU is not Pigeon's nor
// the harness's): answers every POST with 204 at once and counts deliveries by `webhook-id`.
// GET /stats → { count, distinct, duplicates, firstAt, lastAt, open, middlePerSec } (epoch ms);
// POST /reset clears them. `middlePerSec`: the rate between the arrivals of the 10% and the 90%
// distinct id (a burst's pace without its start and its tail).
// DELAY_MS: answer each delivery that much later (a slow endpoint); SILENT=1: never answer (the
// request stays open until Pigeon gives up on it). `open`: deliveries received and not answered yet.
import { createServer } from 'node:http';

let ids = new Set();
/** When each distinct id first arrived, in order. */
let arrivals = [];
let count = 0;
let firstAt = null;
let lastAt = null;
let open = 0;
const delayMs = Number(process.env.DELAY_MS ?? 0);
const silent = process.env.SILENT === '1';

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.setHeader('content-type', 'application/json');
    const stats = { count, distinct: ids.size, duplicates: count - ids.size, firstAt, lastAt, open };
    res.end(JSON.stringify({ ...stats, middlePerSec: middlePerSec() }));
    return;
  }
  if (req.method === 'POST' && req.url === '/reset') {
    ids = new Set();
    arrivals = [];
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
    const id = String(req.headers['webhook-id']);
    if (!ids.has(id)) arrivals.push(at);
    ids.add(id);
    firstAt ??= at;
    lastAt = at;
    open++;
    res.on('close', () => open--);
    if (silent) return;
    res.statusCode = 204;
    if (delayMs > 0) setTimeout(() => res.end(), delayMs);
    else res.end();
  });
});
function middlePerSec() {
  const from = Math.floor(arrivals.length * 0.1);
  const to = Math.floor(arrivals.length * 0.9);
  const seconds = (arrivals[to] - arrivals[from]) / 1000;
  return to > from && seconds > 0 ? (to - from) / seconds : null;
}

server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections(); // the slow and silent receivers' requests would hold it open
});
