import type { AppDeps } from '../deps.js';
import { refuseUnreadBody, refuseUnsafeInput } from '../kit/validation.js';
import { authenticate } from './auth.js';
import { readRouteBody } from './body.js';
import { refuseCrossSiteCookieWrites } from './csrf.js';

/**
 * What every contract route runs before its handler, in this order: the CSRF check, the caller
 * (key or session, rate limit), then its body (read only once the caller is known: none is read
 * for a 401), then the checks of what the body holds.
 */
export function contractMiddleware(deps: AppDeps) {
  return [
    refuseCrossSiteCookieWrites(deps.config.http.publicUrl),
    authenticate(deps),
    readRouteBody(deps.config.http.bodies),
    refuseUnreadBody,
    refuseUnsafeInput,
  ];
}
