import { createHmac, timingSafeEqual } from 'node:crypto';

export interface LinkClaims {
  /** Contact id. */
  c: string;
  /** Email id the link came from, for attribution. */
  e?: string;
}

/** `<payload>.<signature>`: base64url JSON and a truncated HMAC-SHA256 of it. Tamper-proof, never a bare id. */
export function signLinkToken(claims: LinkClaims, secret: string): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${sign(payload, secret)}`;
}

export function verifyLinkToken(token: string, secret: string): LinkClaims | undefined {
  const [payload, signature] = token.split('.');
  if (!payload || !signature) return undefined;
  const expected = Buffer.from(sign(payload, secret));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return typeof claims?.c === 'string' ? claims : undefined;
  } catch {
    return undefined;
  }
}

const sign = (payload: string, secret: string) =>
  createHmac('sha256', secret).update(payload).digest('base64url').slice(0, 32);

/** The per-contact URLs every send makes available as variables (pages: the engagement module). */
export function subscriptionUrls(publicUrl: string, claims: LinkClaims, secret: string) {
  const token = signLinkToken(claims, secret);
  return {
    subscribeUrl: `${publicUrl}/subscribe/${token}`,
    unsubscribeUrl: `${publicUrl}/unsubscribe/${token}`,
    manageUrl: `${publicUrl}/manage/${token}`,
  };
}
