import { type RouteMeta, SESSION_COOKIE } from '@pigeon/contract';
import { parse as parseCookies } from 'cookie';
import type { NextFunction, Request, Response } from 'express';
import { crossSite } from '../kit/cross-site.js';
import { forbidden } from '../kit/errors.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

type RoutedRequest = Request & { tsRestRoute?: { metadata?: Partial<RouteMeta> } };

/**
 * Whether the session cookie is what this request acts with. Secret- and track-key routes never
 * read it; `project` and `dashboard` routes read it only without an Authorization header (a
 * browser cannot add that header to a cross-origin request: it needs a CORS preflight, which
 * Pigeon never grants). Routes without authentication count too when a cookie comes along
 * (logout acts on it; a signed-in browser has no reason to sign up or in from another site).
 */
function actsWithSessionCookie(req: RoutedRequest): boolean {
  const cookies = req.headers.cookie;
  if (!cookies || parseCookies(cookies)[SESSION_COOKIE] === undefined) return false;
  const auth = req.tsRestRoute?.metadata?.auth ?? 'secret';
  if (auth === 'session' || auth === 'none') return true;
  if (auth === 'project' || auth === 'dashboard') return req.header('authorization') === undefined;
  return false;
}

/** ts-rest global middleware, on every contract route: refuses cross-origin writes made with the cookie. */
export function refuseCrossSiteCookieWrites(publicUrl: string) {
  return <R extends object>(tsRestReq: R, _res: Response, next: NextFunction) => {
    const req = tsRestReq as unknown as RoutedRequest;
    const safe = SAFE_METHODS.has(req.method) && !req.tsRestRoute?.metadata?.changesState;
    if (safe || !actsWithSessionCookie(req) || !crossSite(req, publicUrl)) return next();
    next(
      forbidden('A request from another site cannot change anything with your Pigeon session', 'FORBIDDEN', {
        suggestion: 'Use Pigeon from its own pages, or call the API with a secret key (Authorization: Bearer sk_…).',
      }),
    );
  };
}
