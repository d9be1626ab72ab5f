import type { WebhookEvent } from './types.js';

/** Why `webhooks.verify` refused a request. */
export type WebhookVerificationReason =
  | 'MISSING_HEADERS'
  | 'INVALID_TIMESTAMP'
  | 'TIMESTAMP_OUT_OF_TOLERANCE'
  | 'INVALID_SIGNATURE'
  | 'INVALID_SECRET'
  | 'INVALID_PAYLOAD';

/** Thrown by `webhooks.verify`: the request is not a genuine, fresh webhook from Pigeon. Answer it with 400/401. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

/** Header bags as Node (`req.headers`), fetch (`Headers`) or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from now, in seconds (default 300), so a captured request cannot be replayed later. */
  toleranceSeconds?: number;
  /** The clock (tests). */
  now?: () => Date;
}

const SECRET_PREFIX = 'whsec_';

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value[0] : value;
}

function secretBytes(secret: string): Uint8Array {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  try {
    const binary = atob(encoded);
    if (binary.length < 24) throw new Error('too short');
    return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
  } catch {
    throw new WebhookVerificationError(
      'INVALID_SECRET',
      'The secret is not a Standard Webhooks secret (whsec_ + base64)',
    );
  }
}

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** Compares two strings in time that depends only on their length. */
function sameString(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

async function expectedSignature(secret: Uint8Array, content: Uint8Array): Promise<string> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new WebhookVerificationError('INVALID_SECRET', 'Web Crypto (crypto.subtle) is not available');
  const key = await subtle.importKey('raw', secret as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return toBase64(new Uint8Array(await subtle.sign('HMAC', key, content as BufferSource)));
}

/**
 * Checks a webhook request the Standard Webhooks way and returns its typed event: the
 * `webhook-signature` must hold `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` for `secret`
 * (one match is enough: during a rotation Pigeon sends one signature per secret), and
 * `webhook-timestamp` must be within the tolerance. Pass the body exactly as received (raw
 * bytes or text, not re-serialised JSON). Throws {@link WebhookVerificationError} otherwise.
 * De-duplicate on `webhook-id`: a retry or a replay carries the same id.
 */
export async function verifyWebhook<Tracked extends string = never>(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyOptions = {},
): Promise<WebhookEvent<Tracked>> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError(
      'MISSING_HEADERS',
      'webhook-id, webhook-timestamp and webhook-signature are required',
    );
  }
  if (!/^\d{1,15}$/.test(timestamp))
    throw new WebhookVerificationError('INVALID_TIMESTAMP', 'webhook-timestamp is not a number of seconds');
  const now = Math.floor((options.now?.() ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('TIMESTAMP_OUT_OF_TOLERANCE', 'webhook-timestamp is too far from now');
  }
  const body = typeof rawBody === 'string' ? new TextEncoder().encode(rawBody) : rawBody;
  const content = concat(new TextEncoder().encode(`${id}.${timestamp}.`), body);
  const expected = await expectedSignature(secretBytes(secret), content);
  const matches = signatures
    .split(' ')
    .some((entry) => entry.startsWith('v1,') && sameString(entry.slice(3), expected));
  if (!matches) throw new WebhookVerificationError('INVALID_SIGNATURE', 'No signature matches the secret');
  let event: unknown;
  try {
    event = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'The body is not JSON');
  }
  const e = event as Partial<WebhookEvent<string>> | null;
  if (!e || typeof e.type !== 'string' || typeof e.timestamp !== 'string' || typeof e.data !== 'object') {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'The body is not a Pigeon webhook event');
  }
  return event as WebhookEvent<Tracked>;
}

/** `webhooks.verify(rawBody, headers, secret)` without a client (a receiver needs no API key). */
export const webhooks = { verify: verifyWebhook } as const;
