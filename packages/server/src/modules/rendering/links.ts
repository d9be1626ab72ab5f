import { createHmac, timingSafeEqual } from 'node:crypto';

export interface LinkClaims {
  /** Contact id. */
  c: string;
  /** Email id the link came from, for attribution. */
  e?: string;
  /** The topic of the mail the link came from: its unsubscribe link leaves only that topic. */
  t?: string;
}

/** What an open pixel or click redirect names: the email, and for clicks the original link. */
export interface TrackingClaims {
  e: string;
  u?: string;
}

/**
 * `<payload>.<signature>`: base64url JSON and a truncated HMAC-SHA256 of it. Tamper-proof, never a
 * bare id. `kind` is signed too, so a token made for one purpose is refused by the others.
 */
export function signToken(kind: string, claims: object, secret: string): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${sign(kind, payload, secret)}`;
}

export function verifyToken(kind: string, token: string, secret: string): Record<string, unknown> | undefined {
  const [payload, signature, extra] = token.split('.');
  if (!payload || !signature || extra !== undefined) return undefined;
  const expected = Buffer.from(sign(kind, payload, secret));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return claims && typeof claims === 'object' ? claims : undefined;
  } catch {
    return undefined;
  }
}

const sign = (kind: string, payload: string, secret: string) =>
  createHmac('sha256', secret).update(`${kind}:${payload}`).digest('base64url').slice(0, 32);

export const signLinkToken = (claims: LinkClaims, secret: string) => signToken('subscription', claims, secret);

export function verifyLinkToken(token: string, secret: string): LinkClaims | undefined {
  const claims = verifyToken('subscription', token, secret);
  if (typeof claims?.c !== 'string') return undefined;
  const topic = typeof claims.t === 'string' ? { t: claims.t } : {};
  return { c: claims.c, e: typeof claims.e === 'string' ? claims.e : undefined, ...topic };
}

export const signTrackingToken = (claims: TrackingClaims, secret: string) => signToken('tracking', claims, secret);

export function verifyTrackingToken(token: string, secret: string): TrackingClaims | undefined {
  const claims = verifyToken('tracking', token, secret);
  if (typeof claims?.e !== 'string') return undefined;
  return { e: claims.e, u: typeof claims.u === 'string' ? claims.u : undefined };
}

/** The per-contact URLs every send makes available as variables (pages: the engagement module). */
export function subscriptionUrls(publicUrl: string, claims: LinkClaims, secret: string) {
  const token = signLinkToken(claims, secret);
  return {
    subscribeUrl: `${publicUrl}/subscribe/${token}`,
    unsubscribeUrl: `${publicUrl}/unsubscribe/${token}`,
    manageUrl: `${publicUrl}/manage/${token}`,
  };
}

/**
 * The token of an email's reply address (`reply+<token>@` a domain with an inbound route): the
 * email id's 32 hex digits and 20 of its HMAC's (kind `reply`), 52 characters, lower case, so the
 * address fits a local part (64) and survives servers that fold its case.
 */
export function replyToken(emailId: string, secret: string): string {
  const hex = emailId.replace(/-/g, '').toLowerCase();
  return `${hex}${replySignature(hex, secret)}`;
}

/** The email id a reply token names, or undefined when it is not one Pigeon signed. */
export function emailIdOfReplyToken(token: string, secret: string): string | undefined {
  const match = /^([0-9a-f]{32})([0-9a-f]{20})$/.exec(token.toLowerCase());
  if (!match) return undefined;
  const [, hex = '', signature = ''] = match;
  if (!timingSafeEqual(Buffer.from(replySignature(hex, secret)), Buffer.from(signature))) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const replySignature = (hex: string, secret: string) =>
  createHmac('sha256', secret).update(`reply:${hex}`).digest('hex').slice(0, 20);
