import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Response, type Router } from 'express';

/**
 * The built console, when no `CONSOLE_DIR` names one: `packages/console/dist` beside this package,
 * found from the bundle (`packages/server/dist`) or from the sources (`packages/server/src/http`).
 */
export function defaultConsoleDir(): string {
  const candidates = ['../../console/dist', '../../../console/dist'].map((p) =>
    fileURLToPath(new URL(p, import.meta.url)),
  );
  return candidates.find((dir) => existsSync(join(dir, 'index.html'))) ?? (candidates[0] as string);
}

/**
 * The console's policy: scripts and connections only from Pigeon itself (no inline script, no
 * eval); styles may be inline (customer mail is styled inline, and its sandboxed frame inherits this
 * policy); images from anywhere, because that frame shows remote images once the viewer asks (its
 * own stricter policy blocks them until then). Framing by other sites is refused.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: https: http:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const YEAR_SECONDS = 365 * 24 * 3600;

function secure(res: Response): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // Tokens from mail arrive in the fragment; no page of the console sends its address anywhere.
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
}

/**
 * `/app/`: the console's static files. Hashed assets (`/app/assets/…`) are cached for a year
 * (immutable: a new build has new names); every other path is the single page's `index.html`,
 * never cached, so a deep link or a reload opens that page and a deploy is seen at once.
 */
export function consoleRouter(dir: string): Router {
  const router = express.Router();
  const indexFile = join(dir, 'index.html');
  const index = () => (existsSync(indexFile) ? readFileSync(indexFile) : undefined);
  let cached: Buffer | undefined;
  router.get('/app', (req, res, next) => {
    // Routing is not strict (`/app` also matches `/app/`): redirect only the bare path.
    if (req.path !== '/app') return next();
    res.redirect(301, '/app/');
  });
  router.use(
    '/app/assets',
    express.static(join(dir, 'assets'), {
      immutable: true,
      maxAge: YEAR_SECONDS * 1000,
      index: false,
      fallthrough: false,
      setHeaders: (res) => secure(res),
    }),
  );
  router.get(/^\/app\/.*/, (_req, res) => {
    cached ??= index();
    secure(res);
    res.setHeader('Cache-Control', 'no-cache');
    if (!cached) {
      res
        .status(503)
        .type('text/plain')
        .send(`The console is not built (no ${indexFile}). Run "npx -y pnpm@10 build", or set CONSOLE_DIR.`);
      return;
    }
    res.type('html').send(cached);
  });
  return router;
}
