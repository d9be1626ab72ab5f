import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import { type Request, type Response, Router } from 'express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { imageUpload } from '../../kit/uploads.js';
import { type ImageDeps, readImage, uploadImage } from './service.js';
import type { ImageStorage } from './storage.js';

const s = initServer();

export const createUploadsRouter = (deps: AppDeps, storage: ImageStorage) => {
  const imageDeps: ImageDeps = { db: deps.db, config: deps.config, storage };
  return s.router(contract.uploads, {
    image: {
      middleware: [imageUpload],
      handler: async ({ req }) => {
        const file = (req as { file?: { buffer: Buffer } }).file;
        const { created, image } = await uploadImage(imageDeps, callerProject(req).id, file?.buffer);
        return created ? { status: 201, body: image } : { status: 200, body: image };
      },
    },
  });
};

const YEAR_SECONDS = 365 * 24 * 3600;

/**
 * Public image URLs (`/uploads/images/<id>.<ext>`): anyone with the URL may fetch it (email
 * clients do). An image never changes under its URL, so it is cached for a year; the type is
 * the one detected at upload, and the response may not be sniffed into anything else.
 */
export function imagesRouter(deps: AppDeps, storage: ImageStorage): Router {
  const router = Router();
  const imageDeps: ImageDeps = { db: deps.db, config: deps.config, storage };
  router.get('/uploads/images/:file', async (req: Request, res: Response, next) => {
    try {
      const found = await readImage(imageDeps, String(req.params.file));
      if (!found) return next();
      const { image, bytes } = found;
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
