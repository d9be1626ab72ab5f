import { createHmac, randomBytes } from 'node:crypto';
import { uuidv7 } from 'uuidv7';

/** Standard Webhooks (standardwebhooks.com): `whsec_` + base64 of the key bytes. */
const SECRET_PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export const generateWebhookSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;

/** A fresh `webhook-id`. The caller keeps it for every retry of one delivery, so receivers can de-duplicate. */
export const newWebhookId = (): string => `msg_${uuidv7().replace(/-/g, '')}`;

/** Decoded secrets: a burst to one endpoint signs with the same one thousands of times. */
const decoded = new Map<string, Buffer>();
const DECODED_KEPT = 1_000;

/** The key bytes of a `whsec_` secret; throws when it is not one. */
export function secretBytes(secret: string): Buffer {
  const known = decoded.get(secret);
  if (known) return known;
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = BASE64.test(encoded) ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
  if (key.length < 24 || key.length > 64) throw new Error('a webhook secret is whsec_ + base64 of 24 to 64 bytes');
  if (decoded.size >= DECODED_KEPT) decoded.clear();
  decoded.set(secret, key);
  return key;
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per secret, space-separated. */
export function webhookSignature(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  const content = `${id}.${timestamp}.${body}`;
  return secrets
    .map((secret) => `v1,${createHmac('sha256', secretBytes(secret)).update(content).digest('base64')}`)
    .join(' ');
}

/** The three Standard Webhooks headers for one request; `timestamp` is in integer seconds. */
export function webhookHeaders(secrets: readonly string[], id: string, timestamp: number, body: string) {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': webhookSignature(secrets, id, timestamp, body),
  };
}
