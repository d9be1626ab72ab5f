import type { Request } from 'express';

/**
 * CSRF (DESIGN.md §9): a request that changes state with the session cookie must come from
 * Pigeon's own origin. `SameSite=Lax` alone is not enough: it still sends the cookie from the same
 * *site* (another port of the host, a sibling subdomain), which is another *origin*.
 *
 * Browsers say where a request comes from in `Sec-Fetch-Site`, or at least in `Origin`; only
 * Pigeon's own origin (or a request the person typed, `none`) is accepted. Clients that send
 * neither (curl, servers, the SDK) are not browsers and cannot be forged into sending anything.
 */
export function crossSite(req: Request, publicUrl: string): boolean {
  const site = req.header('sec-fetch-site');
  if (site) return site !== 'same-origin' && site !== 'none';
  const origin = req.header('origin');
  if (!origin) return false;
  // The Host the browser connected to is this server's origin too (PUBLIC_URL may name a proxy):
  // a page of another origin cannot make its Origin equal to it.
  const own = new Set([new URL(publicUrl).origin, `${req.protocol}://${req.header('host')}`]);
  return !own.has(origin);
}
