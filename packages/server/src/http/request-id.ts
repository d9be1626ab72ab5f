import { randomUUID } from 'node:crypto';
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
  const incoming = req.header('x-request-id');
  req.requestId = incoming && isUuid(incoming) ? incoming.toLowerCase() : randomUUID();
  res.setHeader('X-Request-ID', req.requestId);
  next();
}
