import type { Request } from 'express';

declare global {
  namespace Express {
    interface Request {
      /** The body as received, on `/webhooks/*` only (signature checks). */
      rawBody?: Buffer;
    }
  }
}

/** body-parser `verify` hook: keeps the bytes a signature was made over. */
export const keepRawBody = (req: Request, _res: unknown, buf: Buffer) => {
  req.rawBody = buf;
};
