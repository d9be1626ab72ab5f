import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { hostnameOf, portOf } from './target.js';

/** How much of a response body is kept (and read at all). */
export const RESPONSE_EXCERPT_BYTES = 1024;

export interface Exchange {
  status: number;
  statusMessage: string;
  headers: IncomingHttpHeaders;
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
  /** Keep-alive agents to reuse connections with (keyed by the vetted address); default none: one connection per request. */
  agents?: WebhookAgents;
}

export interface WebhookAgents {
  http: http.Agent;
  https: https.Agent;
}

/**
 * One HTTP request to a pinned address. The Host header and the TLS server name stay the URL's
 * hostname, so virtual hosts, SNI and certificate checks work as if the name had been looked up.
 */
export function exchange(req: ExchangeRequest): Promise<Exchange> {
  const { url } = req;
  const hostname = hostnameOf(url);
  const secure = url.protocol === 'https:';
  const options: https.RequestOptions = {
    host: req.address,
    port: portOf(url),
    path: `${url.pathname}${url.search}`,
    method: req.method,
    headers: { ...req.headers, host: url.host },
    agent: req.agents ? (secure ? req.agents.https : req.agents.http) : false,
    signal: req.signal,
    ...(secure ? { servername: isIP(hostname) ? undefined : hostname, ca: req.ca } : {}),
  };
  return new Promise((resolve, reject) => {
    const request = (secure ? https : http).request(options, (res) => {
      const decoder = new StringDecoder('utf8');
      let body = '';
      let read = 0;
      let done = false;
      const finish = (bodyError: string | null, complete = false) => {
        if (done) return;
        done = true;
        // A body read to its end leaves the connection reusable (keep-alive agents); else it is cut.
        if (!complete) res.destroy();
        resolve({
          status: res.statusCode ?? 0,
          statusMessage: res.statusMessage ?? '',
          headers: res.headers,
          body,
          bodyError,
        });
      };
      res.on('data', (chunk: Buffer) => {
        const part = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - read);
        read += part.length;
        body += decoder.write(part);
        if (read >= RESPONSE_EXCERPT_BYTES) finish(null);
      });
      res.on('end', () => finish(null, true));
      res.on('close', () =>
        finish(req.signal.aborted ? 'timed out reading the response body' : 'the connection closed mid-body'),
      );
      res.on('error', () => {}); // reported through 'close'
    });
    request.on('error', reject);
    request.end(req.body);
  });
}
