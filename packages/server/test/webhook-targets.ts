import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { TEST_TLS_CERT, TEST_TLS_KEY } from './tls-fixture.js';

export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** The TLS server name the client asked for (HTTPS targets). */
  servername: string | null;
  /** The client's port: the same for requests over one kept-alive connection. */
  remotePort: number | undefined;
}

export interface Target {
  port: number;
  /** `http(s)://127.0.0.1:<port>` */
  origin: string;
  received: Received[];
  close(): Promise<void>;
}

type Handler = (req: Received, res: ServerResponse) => void;

const ok: Handler = (_req, res) => res.end('ok');

/** A real webhook receiver on 127.0.0.1 (random port) that records every request it gets. */
export async function startTarget(handler: Handler = ok, opts: { tls?: boolean } = {}): Promise<Target> {
  const received: Received[] = [];
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const socket = req.socket as Partial<TLSSocket>;
      const servername = typeof socket.servername === 'string' ? socket.servername : null;
      const entry = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        servername,
        remotePort: req.socket.remotePort,
      };
      received.push(entry);
      handler(entry, res);
    });
  };
  const server = opts.tls
    ? https.createServer({ cert: TEST_TLS_CERT, key: TEST_TLS_KEY }, listener)
    : http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
