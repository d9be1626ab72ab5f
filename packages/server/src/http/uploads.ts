import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type multerType from 'multer';
import { AppError } from './errors.js';

/** Spec §8: CSV import files are at most 5 MB. */
export const CSV_LIMIT_BYTES = 5 * 1024 * 1024;

// multer is loaded with the first upload, not in every process at start.
let loaded: Promise<{ multer: typeof multerType; upload: RequestHandler }> | undefined;
const loadUpload = () => {
  loaded ??= import('multer').then(({ default: multer }) => ({
    multer,
    upload: multer({ storage: multer.memoryStorage(), limits: { fileSize: CSV_LIMIT_BYTES, files: 1 } }).single('file'),
  }));
  return loaded;
};

/** Parses a multipart upload with one file field `file` into `req.file`, in memory. */
export function csvUpload(req: Request, res: Response, next: NextFunction): void {
  loadUpload().then(({ multer, upload }) => parseUpload(multer, upload, req, res, next), next);
}

function parseUpload(
  multer: typeof multerType,
  upload: RequestHandler,
  req: Request,
  res: Response,
  next: NextFunction,
): void {
  upload(req, res, (err: unknown) => {
    if (!err) return next();
    if (err instanceof multer.MulterError) {
      const tooLarge = err.code === 'LIMIT_FILE_SIZE';
      return next(
        new AppError(
          tooLarge ? 413 : 422,
          tooLarge ? 'PAYLOAD_TOO_LARGE' : 'VALIDATION_ERROR',
          tooLarge ? 'The CSV file is larger than 5 MB' : err.message,
          {
            suggestion: tooLarge ? 'Split the file into parts of at most 5 MB.' : undefined,
          },
        ),
      );
    }
    next(err);
  });
}
