// Shared by the same-work baselines: a `pg` pool on Pigeon's embedded PostgreSQL (from BASELINE_PG,
// set by the harness), the server's modules, and a small JSON server around a handler.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';

const requireFromServer = createRequire(new URL('../../packages/server/package.json', import.meta.url));
export const requireServerDep = (name) => requireFromServer(name);

/** The server's `dist/bench.js` (same statements and services as Pigeon runs). */
export const serverModules = () => import('../../packages/server/dist/bench.js');

export function pool() {
  const pg = requireFromServer('pg');
  const conn = JSON.parse(process.env.BASELINE_PG ?? 'null');
  if (!conn) throw new Error('BASELINE_PG is not set (the harness passes the database of the Pigeon under test)');
  // Pigeon's default DATABASE_POOL_SIZE.
  const p = new pg.Pool({ ...conn, max: Number(process.env.BASELINE_POOL_SIZE ?? 10) });
  p.on('error', () => {});
  return p;
}

/**
 * node:http around `handle(req, body) → [status, object]`: reads the body, parses JSON, writes the
 * answer in one chunk. Whatever it throws is a 500.
 */
export function serveJson(name, handle) {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      let status = 500;
      let out;
      try {
        const text = Buffer.concat(chunks).toString('utf8');
        [status, out] = await handle(req, text ? JSON.parse(text) : undefined);
      } catch (err) {
        out = { error: String(err?.message ?? err) };
      }
      const body = JSON.stringify(out);
      res.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    });
  });
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    console.log(`${name} listening on http://127.0.0.1:${server.address().port}`);
  });
  const stop = () => server.close(() => process.exit(0)) && server.closeAllConnections();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

export const bearer = (req) => /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
