import {
  type AppRoute,
  type ClientInferRequest,
  type ClientInferResponseBody,
  convertQueryParamsToUrlString,
  type SuccessfulHttpStatusCode,
} from '@ts-rest/core';
import { SharedDeadlines } from './deadlines.js';
import { PigeonError } from './errors.js';
import { originalResponse } from './idempotency.js';
import { isRetryable, retryDelayMs, sleep } from './retry.js';
import { SDK_VERSION } from './version.js';

type Inputs<R extends AppRoute> = ClientInferRequest<R>;

/** What a contract route takes: path params, query, body and declared headers, typed from the contract. */
export type RouteInput<R extends AppRoute> = Pick<
  Inputs<R>,
  Extract<keyof Inputs<R>, 'params' | 'query' | 'body' | 'headers'>
>;

/** The body of the route's 2xx response(s). */
export type SuccessBody<R extends AppRoute> = ClientInferResponseBody<
  R,
  Extract<keyof R['responses'], SuccessfulHttpStatusCode>
>;

/** Per-call options every SDK method accepts. */
export interface RequestOptions {
  /** Cancels the request and any pending retry; the call then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Timeout of each attempt, overriding the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
}

export interface CallOptions extends RequestOptions {
  idempotencyKey?: string;
}

/** How a client authenticates: an API key, or the browser's session cookie (the console). */
export type TransportAuth = { apiKey: string } | { session: { projectId?: string } };

export interface TransportConfig {
  auth: TransportAuth;
  baseUrl: string;
  fetch: typeof fetch;
  maxRetries: number;
  timeoutMs: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
}

interface LooseInput {
  params?: Record<string, unknown>;
  query?: unknown;
  body?: unknown;
  headers?: Record<string, unknown>;
}

/**
 * `pigeon-sdk/<version> node/<version>` on Node. Elsewhere the runtime's own User-Agent stands
 * (browsers set theirs, and a custom one would only add a header to CORS preflights).
 */
const nodeVersion = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node;
const USER_AGENT: Record<string, string> = nodeVersion
  ? { 'user-agent': `pigeon-sdk/${SDK_VERSION} node/${nodeVersion}` }
  : {};

type Attempt = { ok: true; body: unknown } | { ok: false; error: PigeonError };

/** An API key as a bearer token; a session names its project in `X-Project-Id` (the dashboard routes' header). */
function authHeaders(auth: TransportAuth): Record<string, string> {
  if ('apiKey' in auth) return { authorization: `Bearer ${auth.apiKey}` };
  return auth.session.projectId ? { 'x-project-id': auth.session.projectId } : {};
}

/** Sends contract routes: builds the request, retries what is safe to retry, returns the 2xx body or throws. */
export class Transport {
  private readonly deadlines = new SharedDeadlines();
  /** The headers every request sends. */
  private readonly baseHeaders: Record<string, string>;

  constructor(private readonly config: TransportConfig) {
    const { auth } = config;
    this.baseHeaders = { ...USER_AGENT, accept: 'application/json', ...authHeaders(auth) };
    // The session cookie goes with same-origin requests only (the console is served by Pigeon itself).
    this.credentials = 'apiKey' in auth ? undefined : 'same-origin';
  }

  private readonly credentials: RequestCredentials | undefined;

  /** @internal Typed from the contract, so left out of the published declarations (see tsup.config.ts). */
  async call<R extends AppRoute>(route: R, input: RouteInput<R>, options: CallOptions = {}): Promise<SuccessBody<R>> {
    const { params, query, body, headers: extra } = input as LooseInput;
    const url = this.config.baseUrl + buildPath(route.path, params) + convertQueryParamsToUrlString(query);
    const encoded = encodeBody(route, body);
    const headers: Record<string, string> = { ...this.baseHeaders };
    if (encoded.contentType) headers['content-type'] = encoded.contentType;
    for (const name in extra) {
      const value = extra[name];
      if (value !== undefined) headers[name.toLowerCase()] = String(value);
    }
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
    const init: RequestInit = { method: route.method, headers, body: encoded.body };
    if (this.credentials) init.credentials = this.credentials;
    const hasKey = 'idempotency-key' in headers;
    const maxRetries = options.maxRetries ?? this.config.maxRetries;

    for (let attempt = 0; ; attempt++) {
      const result = await this.attempt(url, init, options);
      if (result.ok) return result.body as SuccessBody<R>;
      const { error } = result;
      // A retry of this call met the key the earlier attempt used: that attempt went through.
      const replayed = attempt > 0 && hasKey ? originalResponse(error, headers['idempotency-key'] ?? '') : undefined;
      if (replayed) return replayed.body as SuccessBody<R>;
      if (attempt >= maxRetries || !isRetryable(error, route.method, hasKey)) throw error;
      const backoff = { baseDelayMs: this.config.retryBaseDelayMs, maxDelayMs: this.config.retryMaxDelayMs };
      await sleep(retryDelayMs(attempt, backoff, error.headers?.get('retry-after')), options.signal);
    }
  }

  private attempt(url: string, init: RequestInit, options: RequestOptions): Promise<Attempt> {
    const timeoutMs = options.timeoutMs ?? this.config.timeoutMs;
    return options.signal
      ? this.attemptWithSignal(url, init, timeoutMs, options.signal)
      : this.attemptWithDeadline(url, init, timeoutMs);
  }

  /** The common case, no caller's signal: the attempt joins a shared deadline (see deadlines.ts). */
  private async attemptWithDeadline(url: string, init: RequestInit, timeoutMs: number): Promise<Attempt> {
    const deadline = this.deadlines.join(timeoutMs);
    try {
      return await this.send(url, { ...init, signal: deadline.signal });
    } catch (cause) {
      return {
        ok: false,
        error: deadline.expired ? PigeonError.timeout(timeoutMs, cause) : PigeonError.network(cause),
      };
    } finally {
      this.deadlines.leave(deadline);
    }
  }

  /** A caller's signal: a controller of the attempt's own follows it and the attempt's timer. */
  private async attemptWithSignal(
    url: string,
    init: RequestInit,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<Attempt> {
    signal.throwIfAborted();
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.send(url, { ...init, signal: controller.signal });
    } catch (cause) {
      if (signal.aborted) throw signal.reason;
      return { ok: false, error: timedOut ? PigeonError.timeout(timeoutMs, cause) : PigeonError.network(cause) };
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }

  private async send(url: string, init: RequestInit): Promise<Attempt> {
    const response = await this.config.fetch(url, init);
    const body = await readBody(response); // still under the timeout: a body can stall too
    if (response.ok) return { ok: true, body };
    return { ok: false, error: PigeonError.fromResponse(response.status, body, response.headers) };
  }
}

/** Fills `:name` segments with URL-encoded values; an optional `:name?` segment is dropped when absent. */
export function buildPath(path: string, params: Record<string, unknown> = {}): string {
  if (!path.includes(':')) return path;
  return path.replace(/\/:([A-Za-z0-9_]+)(\?)?/g, (_, name: string, optional?: string) => {
    const value = params[name];
    if (value === undefined || value === null || value === '') {
      if (optional) return '';
      throw new TypeError(`Missing path parameter "${name}" for ${path}`);
    }
    const text = String(value);
    // URL parsers resolve "." and ".." segments even when percent-encoded, which would change the endpoint.
    if (text === '.' || text === '..') throw new TypeError(`Invalid path parameter "${name}": ${text}`);
    return `/${encodeURIComponent(text)}`;
  });
}

function encodeBody(route: AppRoute, body: unknown): { body?: BodyInit; contentType?: string } {
  if (route.method === 'GET' || body === undefined) return {};
  // No content-type for multipart: fetch sets it, with the boundary.
  if (body instanceof FormData) return { body };
  if ('contentType' in route && route.contentType === 'multipart/form-data') return { body: toFormData(body) };
  return { body: JSON.stringify(body), contentType: 'application/json' };
}

/** A plain `{ field: value }` body of a multipart route: Blobs become file parts, other values text parts. */
function toFormData(body: unknown): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (value === undefined) continue;
    if (value instanceof Blob) form.append(name, value);
    else form.append(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return form;
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return undefined;
  if (!(response.headers.get('content-type') ?? '').includes('json')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
