import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { isUuid } from '../db/scoped.js';

declare global {
  namespace Express {
    interface Request {
      requestId: string;
    }
  }
}

/** Reuses a caller's `X-Request-ID` when it is a uuid, otherwise makes one; echoes it on the response. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  req.requestId = assignRequestId(req, res);
  next();
}

/** The same for a request answered outside express (`http/fast-routes.ts`). */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && isUuid(incoming) ? incoming.toLowerCase() : randomUUID();
  res.setHeader('X-Request-ID', id);
  return id;
}
