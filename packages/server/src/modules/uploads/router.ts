import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import { type Request, type Response, Router } from 'express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../http/auth.js';
import { imageUpload } from '../../http/uploads.js';
import { findImage, uploadImage } from './service.js';
import type { ImageStorage } from './storage.js';

const s = initServer();

export const createUploadsRouter = (deps: AppDeps, storage: ImageStorage) =>
  s.router(contract.uploads, {
    image: {
      middleware: [imageUpload],
      handler: async ({ req }) => {
        const file = (req as { file?: { buffer: Buffer } }).file;
        const { created, image } = await uploadImage(
          {
            pool: deps.db.pool,
            storage,
            quotaBytes: deps.config.uploads.quotaBytes,
            publicUrl: deps.config.http.publicUrl,
          },
          callerProject(req).id,
          file?.buffer,
        );
        return created ? { status: 201, body: image } : { status: 200, body: image };
      },
    },
  });

const YEAR_SECONDS = 365 * 24 * 3600;

/**
 * Public image URLs (`/uploads/images/<id>.<ext>`): anyone with the URL may fetch it (email
 * clients do). An image never changes under its URL, so it is cached for a year; the type is
 * the one detected at upload, and the response may not be sniffed into anything else.
 */
export function imagesRouter(deps: AppDeps, storage: ImageStorage): Router {
  const router = Router();
  router.get('/uploads/images/:file', async (req: Request, res: Response, next) => {
    try {
      const image = await findImage(deps.db.pool, String(req.params.file));
      const bytes = image && (await storage.get(image.storage_key));
      if (!image || !bytes) return next();
      const etag = `"${image.sha256}"`;
      res.set({
        'Cache-Control': `public, max-age=${YEAR_SECONDS}, immutable`,
        ETag: etag,
        'Content-Type': image.content_type,
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': "default-src 'none'; sandbox",
        'Cross-Origin-Resource-Policy': 'cross-origin',
      });
      if (req.headers['if-none-match'] === etag) return res.status(304).end();
      res.status(200).send(bytes);
    } catch (err) {
      next(err);
    }
  });
  return router;
}
