import { STATUS_CODES } from 'node:http';
import { isIP } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { type Dispatcher, Pool } from 'undici';
import { hostnameOf, portOf } from './target.js';

/** How much of a response body is kept (and read at all). */
export const RESPONSE_EXCERPT_BYTES = 1024;

export interface Exchange {
  status: number;
  /** The status code's standard reason phrase (undici does not pass on the one the server sent). */
  statusMessage: string;
  /** The answer's `Location` and `Retry-After` (the first, when it sent several). */
  location: string | undefined;
  retryAfter: string | undefined;
  /** The first RESPONSE_EXCERPT_BYTES bytes of the body, whole UTF-8 characters only. */
  body: string;
  /** The body could not be read to its end or to the excerpt's size (the status still counts). */
  bodyError: string | null;
}

export interface ExchangeRequest {
  url: URL;
  /** The vetted address: the connection goes there and nowhere else (no second DNS lookup). */
  address: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal;
  ca?: string | Buffer;
  /** Kept-alive connections to reuse, keyed by the vetted address. */
  pools: WebhookPools;
}

/**
 * undici connection pools, one per vetted address, port, TLS name and trusted CA, each with at
 * most `connections` sockets (null: no bound) kept alive: a burst to one endpoint does not open a
 * connection per request. undici rather than node:http: about half the client CPU per request on
 * loopback (44 against 80 µs, bench/results/2026-11-27-thirteenth-sitting.md).
 */
export class WebhookPools {
  private readonly pools = new Map<string, Pool>();
  /** The extra CAs seen (tests' self-signed ones), numbered for the pools' keys. */
  private readonly cas = new Map<string | Buffer, number>();
  constructor(private readonly connections: number | null) {}

  get(origin: string, connect: ConnectOptions): Pool {
    const key = `${origin} ${connect.servername ?? ''} ${this.caId(connect.ca)}`;
    let pool = this.pools.get(key);
    if (!pool || pool.destroyed || pool.closed) {
      if (this.pools.size >= KEPT_POOLS) this.dropIdle();
      pool = new Pool(origin, { connections: this.connections, connect });
      this.pools.set(key, pool);
    }
    return pool;
  }

  /** Pools with no connection and no request left: a worker that has met many addresses keeps only the live ones. */
  private dropIdle(): void {
    for (const [key, pool] of this.pools) {
      const { connected, size } = pool.stats;
      if (connected > 0 || size > 0) continue;
      this.pools.delete(key);
      void pool.close().catch(() => {});
    }
  }

  private caId(ca: string | Buffer | undefined): number {
    if (ca === undefined) return 0;
    const known = this.cas.get(ca);
    if (known) return known;
    this.cas.set(ca, this.cas.size + 1);
    return this.cas.size;
  }

  get size(): number {
    return this.pools.size;
  }

  async destroy(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.destroy().catch(() => {})));
  }
}

/** Past this many pools, the idle ones are dropped before another is made. */
export const KEPT_POOLS = 256;

type ConnectOptions = { servername?: string; ca?: string | Buffer };

/**
 * One HTTP request to a pinned address. The Host header and the TLS server name stay the URL's
 * hostname, so virtual hosts, SNI and certificate checks work as if the name had been looked up.
 */
export async function exchange(req: ExchangeRequest): Promise<Exchange> {
  const { url } = req;
  const hostname = hostnameOf(url);
  const secure = url.protocol === 'https:';
  const host = isIP(req.address) === 6 ? `[${req.address}]` : req.address;
  const origin = `${url.protocol}//${host}:${portOf(url)}`;
  const connect: ConnectOptions = secure ? { servername: isIP(hostname) ? undefined : hostname, ca: req.ca } : {};
  const res = await req.pools.get(origin, connect).request({
    path: `${url.pathname}${url.search}`,
    method: req.method as Dispatcher.HttpMethod,
    headers: { ...req.headers, host: url.host },
    body: req.body,
    signal: req.signal,
  });
  const { body, bodyError } = await excerpt(res.body, req.signal);
  return {
    status: res.statusCode,
    statusMessage: STATUS_CODES[res.statusCode] ?? '',
    location: first(res.headers.location),
    retryAfter: first(res.headers['retry-after']),
    body,
    bodyError,
  };
}

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** The first RESPONSE_EXCERPT_BYTES of a body; a body read to its end leaves the connection reusable, else it is cut. */
async function excerpt(stream: Dispatcher.ResponseData['body'], signal: AbortSignal) {
  const decoder = new StringDecoder('utf8');
  let body = '';
  let read = 0;
  try {
    for await (const chunk of stream) {
      const part = (chunk as Buffer).subarray(0, RESPONSE_EXCERPT_BYTES - read);
      read += part.length;
      body += decoder.write(part);
      if (read >= RESPONSE_EXCERPT_BYTES) {
        stream.destroy();
        break;
      }
    }
    return { body, bodyError: null };
  } catch {
    return {
      body,
      bodyError: signal.aborted ? 'timed out reading the response body' : 'the connection closed mid-body',
    };
  }
}
