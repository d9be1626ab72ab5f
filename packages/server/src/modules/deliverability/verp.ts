import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * VERP return paths: `bounces+<token>@<bounce domain>`, where the token is the email id (32 hex)
 * followed by 20 hex of an HMAC over it (LINK_SIGNING_SECRET, its own purpose label), so a
 * bounce or a complaint can only name an email Pigeon sent. Lower-case hex throughout: some
 * relays lower-case local parts. The whole local part is 60 characters (the limit is 64).
 */
const PREFIX = 'bounces+';
const MAC_HEX = 20;

const macOf = (secret: string, id: string) =>
  createHmac('sha256', secret).update(`verp:${id}`).digest('hex').slice(0, MAC_HEX);

export function returnPathFor(emailId: string, secret: string, bounceDomain: string): string {
  const id = emailId.replace(/-/g, '').toLowerCase();
  return `${PREFIX}${id}${macOf(secret, id)}@${bounceDomain}`;
}

/** The email id a return path names, or undefined when it is not one of ours or its MAC is wrong. */
export function emailIdOfReturnPath(address: string, secret: string, bounceDomain: string): string | undefined {
  const at = address.lastIndexOf('@');
  if (at < 0 || address.slice(at + 1).toLowerCase() !== bounceDomain.toLowerCase()) return undefined;
  const local = address.slice(0, at).toLowerCase();
  const match = /^bounces\+([0-9a-f]{32})([0-9a-f]{20})$/.exec(local);
  if (!match?.[1] || !match[2]) return undefined;
  const expected = Buffer.from(macOf(secret, match[1]));
  const given = Buffer.from(match[2]);
  if (!timingSafeEqual(expected, given)) return undefined;
  const h = match[1];
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * `Feedback-ID` (Gmail's feedback loop groups complaints by it): campaign or template, project,
 * kind of mail, and the sender id. Every part is an id Pigeon made, so no header injection.
 */
export function feedbackIdFor(email: {
  campaign_id: string | null;
  template_id?: string | null;
  project_id: string;
  source?: string | null;
}): string {
  const what = email.campaign_id ?? email.template_id ?? 'direct';
  return `${what}:${email.project_id}:${(email.source ?? 'transactional').toLowerCase()}:pigeon`;
}
