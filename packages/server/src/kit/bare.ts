import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A route answered on the bare node request, before express (`http/fast-routes.ts`): `route` is
 * its template (the metrics label), `handle` answers it. A rejection of `handle` is answered in
 * the spec's envelope, as express's error handler would.
 */
export interface BareRoute {
  route: string;
  handle: (res: ServerResponse) => Promise<void>;
}

/** Finds the bare route of a request: undefined hands it to express. */
export type BareRouter = (req: IncomingMessage) => BareRoute | undefined;

/** A JSON answer, with the headers express's `res.json` sets. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}
