import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

declare global {
  namespace Express {
    interface Request {
      requestId: string;
    }
  }
}

/** Reuses a caller's `X-Request-ID` when it is a uuid, otherwise makes one; echoes it on the response. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.header('x-request-id');
  req.requestId = incoming && UUID.test(incoming) ? incoming.toLowerCase() : randomUUID();
  res.setHeader('X-Request-ID', req.requestId);
  next();
}
