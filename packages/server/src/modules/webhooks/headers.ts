import { permanent } from './target.js';

export const WEBHOOK_USER_AGENT = 'Pigeon-Webhooks/1';

/** Headers Pigeon sets itself; a caller's value for them is ignored. */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
]);

/** Dropped when a redirect leaves the origin, as browsers do. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const UNSAFE_VALUE = /[\r\n\0]/;

/** The caller's headers, lower-cased and checked, without the reserved ones. */
export function callerHeaders(headers: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    if (!TOKEN.test(key)) throw permanent(`invalid header name: ${name.slice(0, 100)}`);
    if (typeof value !== 'string' || UNSAFE_VALUE.test(value)) throw permanent(`invalid value of header ${key}`);
    if (!RESERVED_HEADERS.has(key)) out[key] = value;
  }
  return out;
}

export const withoutCredentials = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.includes(name)));

/**
 * What goes on the wire: a string as it is, anything else (but undefined) as JSON. A string's
 * content type is JSON's when it parses as JSON, else plain text (none without `detectType`).
 */
export function encodeBody(
  body: unknown,
  opts: { detectType?: boolean } = {},
): { text: string | undefined; contentType: string | undefined } {
  if (body === undefined) return { text: undefined, contentType: undefined };
  if (typeof body !== 'string') return { text: toJson(body), contentType: 'application/json' };
  if (opts.detectType === false) return { text: body, contentType: undefined };
  return { text: body, contentType: isJson(body) ? 'application/json' : 'text/plain; charset=utf-8' };
}

function toJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) throw permanent('the body cannot be sent as JSON');
  return text;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
