import { performance } from 'node:perf_hooks';
import type { WebhookMethod } from '@pigeon/contract';
import { callerHeaders, encodeBody, WEBHOOK_USER_AGENT, withoutCredentials } from './headers.js';
import { type Exchange, exchange, WebhookPools } from './request.js';
import { classifyStatus, parseRetryAfter, type WebhookOutcome } from './retry.js';
import { secretBytes, webhookHeaders } from './sign.js';
import {
  type AddressPolicy,
  AttemptFailure,
  defaultPolicy,
  type HostResolver,
  parseWebhookUrl,
  permanent,
  vetTarget,
} from './target.js';

export const WEBHOOK_TIMEOUT_MS = 10_000;
/** The webhook senders' DNS cache (`CachingResolver`): timeout per try and entries kept. */
export const WEBHOOK_DNS = { timeoutMs: 2_000, maxEntries: 10_000 };
export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/**
 * The WEBHOOK step's connections: kept alive per vetted address like the event webhooks' (a
 * connection made per request cost twice node:http's CPU with undici, about 500 µs), with no bound
 * on their number per address (as when each request had its own).
 */
const sharedPools = new WebhookPools(null);

export interface WebhookRequest {
  url: string;
  method?: WebhookMethod;
  headers?: Record<string, string>;
  /** A string is sent as it is; anything else but undefined as JSON. */
  body?: unknown;
  /** `msg_…`, the same for every attempt of one delivery (see `newWebhookId`). */
  webhookId: string;
  /** The project's active secrets (`webhookSecrets`): one signature each. */
  secrets: readonly string[];
  /** Bounds the whole attempt: DNS, connections, redirects and reading the response. */
  timeoutMs?: number;
  /** `config.webhooks.allowPrivateNetworks`: skip the address policy entirely. */
  allowPrivateNetworks: boolean;
  resolver: HostResolver;
  /** The clock of `webhook-timestamp`. */
  now?: () => Date;
  /** Replaces the address policy (tests let one loopback port through). */
  isForbidden?: AddressPolicy;
  /** Extra trusted CA certificates (PEM). */
  ca?: string | Buffer;
  /** Kept-alive connections (the event webhooks' sender has its own); default: the process's shared ones. */
  pools?: WebhookPools;
}

export interface WebhookResult {
  outcome: WebhookOutcome;
  /** Status of the final response; null when none arrived. */
  statusCode: number | null;
  /** At most the first 1 KB of the final response body; null when no response arrived. */
  responseBody: string | null;
  durationMs: number;
  /** Why the attempt did not succeed; null on success. */
  error: string | null;
  /** The URL of the last request (after redirects). */
  url: string;
  /** The receiver's `Retry-After` on a retryable answer, in ms. */
  retryAfterMs: number | null;
  /**
   * Pigeon refused to make the request (the SSRF guard refused its address, the URL is not one
   * Pigeon calls, or its redirects never end): trying again later would be refused the same way.
   */
  refused: boolean;
}

interface Hop {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/**
 * One delivery attempt: vet the target, connect to the vetted address only, follow redirects
 * (each one vetted again), and classify the outcome. It never throws; retrying is the caller's.
 */
export async function sendWebhook(req: WebhookRequest): Promise<WebhookResult> {
  const started = performance.now();
  const timeoutMs = req.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const timedOut = new Promise<never>((_, reject) => {
    controller.signal.addEventListener('abort', () => reject(new Error('timed out')), { once: true });
  });
  timedOut.catch(() => {});
  let hop: Hop | undefined;
  const finish = (fields: Omit<WebhookResult, 'durationMs' | 'url'>): WebhookResult => ({
    ...fields,
    durationMs: Math.round(performance.now() - started),
    url: hop?.url.href ?? req.url,
  });
  try {
    const timestamp = Math.floor((req.now?.() ?? new Date()).getTime() / 1000);
    checkSigning(req);
    hop = firstHop(req);
    for (let redirects = 0; ; redirects++) {
      const vetting = vetTarget(hop.url, {
        resolver: req.resolver,
        allowPrivateNetworks: req.allowPrivateNetworks,
        policy: req.isForbidden ?? defaultPolicy,
      });
      const address = await Promise.race([vetting, timedOut]);
      const response = await exchange({
        url: hop.url,
        address,
        method: hop.method,
        headers: { ...hop.headers, ...webhookHeaders(req.secrets, req.webhookId, timestamp, hop.body ?? '') },
        body: hop.body,
        signal: controller.signal,
        ca: req.ca,
        pools: req.pools ?? sharedPools,
      });
      const location = response.location;
      if (!REDIRECT_STATUSES.has(response.status) || !location) return finish(fromResponse(response));
      if (redirects === MAX_REDIRECTS) throw permanent(`more than ${MAX_REDIRECTS} redirects`);
      hop = nextHop(hop, response.status, location);
    }
  } catch (err) {
    const failure = controller.signal.aborted
      ? new AttemptFailure('retryable', `timed out after ${timeoutMs} ms`)
      : err instanceof AttemptFailure
        ? err
        : new AttemptFailure('retryable', (err as Error).message || String(err)); // the network's
    return finish({
      outcome: failure.outcome,
      statusCode: null,
      responseBody: null,
      error: failure.message,
      retryAfterMs: null,
      refused: failure.outcome === 'permanent',
    });
  } finally {
    clearTimeout(timer);
  }
}

function checkSigning(req: WebhookRequest): void {
  if (!/^[\x21-\x7e]{1,255}$/.test(req.webhookId)) throw permanent('invalid webhook id');
  if (req.secrets.length === 0) throw permanent('no signing secret');
  try {
    for (const secret of req.secrets) secretBytes(secret);
  } catch (err) {
    throw permanent((err as Error).message);
  }
}

function firstHop(req: WebhookRequest): Hop {
  const url = parseWebhookUrl(req.url);
  const headers = callerHeaders(req.headers);
  // A caller that names the content type spares its detection (a JSON parse of the body).
  const body = encodeBody(req.body, { detectType: headers['content-type'] === undefined });
  headers['user-agent'] ??= WEBHOOK_USER_AGENT;
  if (body.contentType) headers['content-type'] ??= body.contentType;
  return { url, method: req.method ?? 'POST', headers, body: body.text };
}

/** 303, and 301/302 after a POST, continue as a GET without body (as browsers do); 307/308 repeat the request. */
function nextHop(hop: Hop, status: number, location: string): Hop {
  const url = parseWebhookUrl(location, hop.url);
  const headers = url.origin === hop.url.origin ? hop.headers : withoutCredentials(hop.headers);
  const toGet =
    (status === 303 && hop.method !== 'GET') || ((status === 301 || status === 302) && hop.method === 'POST');
  if (!toGet) return { url, method: hop.method, headers, body: hop.body };
  const withoutType = Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'content-type'));
  return { url, method: 'GET', headers: withoutType, body: undefined };
}

function fromResponse(response: Exchange): Omit<WebhookResult, 'durationMs' | 'url'> {
  const outcome = classifyStatus(response.status);
  const status = `HTTP ${response.status}${response.statusMessage ? ` ${response.statusMessage}` : ''}`;
  return {
    outcome,
    statusCode: response.status,
    responseBody: response.body,
    error: outcome === 'success' ? null : response.bodyError ? `${status} (${response.bodyError})` : status,
    retryAfterMs: outcome === 'retryable' ? parseRetryAfter(response.retryAfter, new Date()) : null,
    refused: false,
  };
}
