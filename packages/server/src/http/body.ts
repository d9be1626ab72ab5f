import type { RouteMeta } from '@pigeon/contract';
import { contract } from '@pigeon/contract';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ANONYMOUS_BODY_LIMIT, DEFAULT_BODY_LIMIT, SEND_BODY_LIMIT } from '../kit/body-limits.js';
import { AppError } from '../kit/errors.js';
import { keepRawBody } from './raw-body.js';

const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

/** Routes whose bodies may be up to `SEND_BODY_LIMIT` (a message with its attachments). */
const LARGE_BODY_PATHS = new Set<string>([contract.emails.send.path, contract.emails.sendBatch.path]);

type RouteInfo = { path: string; contentType?: string; metadata?: Partial<RouteMeta> };
type RoutedRequest = Request & { tsRestRoute?: RouteInfo };

export interface BodyReaderOptions {
  /** Large bodies (over 1 MB, compressed, or of unknown length) read and handled at once per process. */
  largeBodySlots: number;
  /** How long a large body waits for a slot before the request is answered 503. */
  largeBodyWaitMs: number;
}

/**
 * ts-rest global middleware, after authentication: reads the body of the route it belongs to, so
 * nobody without a key makes Pigeon read (or inflate) more than a sign-in form. Limits apply to the
 * inflated body and abort its reading once passed (body-parser counts decoded bytes). The large
 * bodies of `/v1/send` take a slot of a per-process gate, so concurrent 50 MB messages cannot
 * exhaust the heap; multipart routes parse their file in their own route middleware, after this.
 */
export function readRouteBody(options: BodyReaderOptions) {
  const gate = bodyGate(options.largeBodySlots, options.largeBodyWaitMs);
  const readers = new WeakMap<RouteInfo, RequestHandler | undefined>();
  return <R extends object>(tsRestReq: R, res: Response, next: NextFunction): void => {
    const req = tsRestReq as unknown as RoutedRequest;
    const route = req.tsRestRoute;
    if (!route) {
      next();
      return;
    }
    if (!readers.has(route)) readers.set(route, readerFor(route, gate));
    const reader = readers.get(route);
    if (!reader) {
      next();
      return;
    }
    reader(req, res, (err?: unknown) => {
      // A body that cannot be read is answered in the envelope, also on the routes whose
      // validation failures answer the spec's bare `{ error }` 400.
      if (err) res.locals.bodyUnreadable = true;
      next(err);
    });
  };
}

function readerFor(route: RouteInfo, gate: BodyGate): RequestHandler | undefined {
  if (route.contentType === 'multipart/form-data') return undefined;
  // Signed inbound webhooks: JSON whatever the Content-Type (SNS says text/plain), raw bytes kept for the signature.
  if (route.path.startsWith('/webhooks/')) {
    return express.json({ limit: DEFAULT_BODY_LIMIT, type: () => true, verify: keepRawBody });
  }
  if (LARGE_BODY_PATHS.has(route.path)) return gated(gate, express.json({ limit: SEND_BODY_LIMIT }));
  if (route.metadata?.auth === 'none') return express.json({ limit: ANONYMOUS_BODY_LIMIT });
  return express.json({ limit: DEFAULT_BODY_LIMIT });
}

/** A body that may hold more than the default limit once read: over it by length, compressed, or of unknown length. */
export function mayBeLarge(req: Request): boolean {
  if (req.headers['content-encoding'] !== undefined && req.headers['content-encoding'] !== 'identity') return true;
  const length = req.headers['content-length'];
  if (length === undefined) return req.headers['transfer-encoding'] !== undefined;
  return Number(length) > DEFAULT_BODY_LIMIT_BYTES;
}

function gated(gate: BodyGate, read: RequestHandler): RequestHandler {
  return (req, res, next) => {
    if (!mayBeLarge(req)) return read(req, res, next);
    gate.acquire().then((release) => {
      // Held until the answer is out: the parsed message lives as long as its handling.
      res.once('close', release);
      read(req, res, next);
    }, next);
  };
}

interface BodyGate {
  /** Resolves with the release function once a slot is free; rejects with a 503 after the wait. */
  acquire: () => Promise<() => void>;
}

/** A counting semaphore whose waiters give up after `waitMs` (FIFO). */
export function bodyGate(slots: number, waitMs: number): BodyGate {
  let free = slots;
  const waiting: Array<{ grant: () => void }> = [];
  const release = () => {
    const nextWaiter = waiting.shift();
    if (nextWaiter) nextWaiter.grant();
    else free += 1;
  };
  const once = () => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
    };
  };
  return {
    acquire: () => {
      if (free > 0) {
        free -= 1;
        return Promise.resolve(once());
      }
      return new Promise((resolve, reject) => {
        const waiter = {
          grant: () => {
            clearTimeout(timer);
            resolve(once());
          },
        };
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(waiter), 1);
          reject(serverBusy());
        }, waitMs);
        waiting.push(waiter);
      });
    },
  };
}

const serverBusy = () =>
  new AppError('unavailable', 'SERVER_BUSY', 'Too many large requests are being read at once; try again shortly', {
    suggestion: 'Retry after a second (the SDK does). Large means over 1 MB, compressed, or without Content-Length.',
    headers: { 'Retry-After': '1' },
  });
