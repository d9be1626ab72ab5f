import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppDeps } from '../../deps.js';
import type { BareRoute, BareRouter } from '../../kit/bare.js';
import { writePage } from '../../kit/pages.js';
import { verifyTrackingToken } from '../rendering/public.js';
import './pages.js';
import { recordClick, recordOpen } from './service.js';

/** A transparent 1×1 GIF. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const OPEN = /^\/t\/o\/([^/]+)\.gif$/;
const CLICK = /^\/t\/c\/([^/]+)\/?$/;

/**
 * The open pixel (`GET /t/o/<token>.gif`) and the click redirect (`GET /t/c/<token>`): fetched by
 * mail clients for every open and click, outside the API contract, with the signed token as their
 * only credential. They are answered on the bare node request, before express (routing, its
 * request and response wrappers cost more than the work here); `http/fast-routes.ts` gives them
 * the same request id, log line and metrics as every other request.
 */
export function trackingRoutes(deps: AppDeps): BareRouter {
  const db = deps.db.pool;
  const secret = deps.config.secrets.linkSigning;
  /** Recording is best effort: a reader always gets the image or the link, even if the database is down. */
  const record = (what: Promise<void>) =>
    what.catch((err) => deps.logger.error({ err }, 'could not record an open or click'));

  /** The pixel always answers the image, whatever the token: mail clients show broken images otherwise. */
  const open = async (token: string | undefined, res: ServerResponse, head: boolean) => {
    const claims = token ? verifyTrackingToken(token, secret) : undefined;
    if (claims && !claims.u) await record(recordOpen(db, claims));
    res.writeHead(200, {
      'Content-Type': 'image/gif',
      'Cache-Control': 'no-store, max-age=0',
      'Content-Length': PIXEL.length,
    });
    res.end(head ? undefined : PIXEL);
  };

  /** Redirects only to the link the signed token names: an altered URL is refused, never followed. */
  const click = async (token: string | undefined, res: ServerResponse, head: boolean) => {
    const claims = token ? verifyTrackingToken(token, secret) : undefined;
    if (!claims?.u) {
      const message = 'Check that you opened the whole link from the email.';
      return writePage(res, 400, 'link-error', { title: 'This link is not valid', message }, head);
    }
    await record(recordClick(db, { e: claims.e, u: claims.u }));
    const body = `Found. Redirecting to ${claims.u}`;
    res.writeHead(302, {
      Location: claims.u,
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(head ? undefined : body);
  };

  return (req: IncomingMessage): BareRoute | undefined => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
    const path = (req.url ?? '').split('?', 1)[0] as string;
    const head = req.method === 'HEAD';
    const opened = OPEN.exec(path);
    if (opened) return { route: '/t/o/:token.gif', handle: (res) => open(decoded(opened[1]), res, head) };
    const clicked = CLICK.exec(path);
    if (clicked) return { route: '/t/c/:token', handle: (res) => click(decoded(clicked[1]), res, head) };
    return undefined;
  };
}

/** A path segment, percent-decoded; undefined when it is not valid percent-encoded UTF-8. */
function decoded(segment: string | undefined): string | undefined {
  try {
    return segment === undefined ? undefined : decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
