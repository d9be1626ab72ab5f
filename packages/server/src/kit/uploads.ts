import { IMAGE_UPLOAD_LIMIT_BYTES } from '@pigeon/contract';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type multerType from 'multer';
import { AppError, badRequest } from './errors.js';

/** Spec §8: CSV import files are at most 5 MB. */
export const CSV_LIMIT_BYTES = 5 * 1024 * 1024;

// multer is loaded with the first upload, not in every process at start.
let multerModule: Promise<typeof multerType> | undefined;
const loadMulter = () => {
  multerModule ??= import('multer').then((m) => m.default);
  return multerModule;
};

/** Parses a multipart upload with one file field `file` into `req.file`, in memory, up to `limit`. */
function singleFile(limitBytes: number, tooLarge: () => AppError): RequestHandler {
  let upload: RequestHandler | undefined;
  return (req: Request, res: Response, next: NextFunction) => {
    loadMulter().then((multer) => {
      upload ??= multer({ storage: multer.memoryStorage(), limits: { fileSize: limitBytes, files: 1 } }).single('file');
      upload(req, res, (err: unknown) => {
        if (!err) return next();
        if (err instanceof multer.MulterError) {
          return next(
            err.code === 'LIMIT_FILE_SIZE'
              ? tooLarge()
              : new AppError('unprocessable', 'VALIDATION_ERROR', err.message, {
                  errors: [{ field: err.field ?? 'file', message: err.message, code: 'invalid_type' }],
                }),
          );
        }
        // busboy's own errors: no boundary, a body cut off, a malformed part header.
        next(
          badRequest(`The multipart body cannot be read: ${(err as Error).message}`, {
            suggestion: 'Send multipart/form-data with its boundary, complete, with the file in the field "file".',
          }),
        );
      });
    }, next);
  };
}

export const csvUpload = singleFile(
  CSV_LIMIT_BYTES,
  () =>
    new AppError('too-large', 'PAYLOAD_TOO_LARGE', 'The CSV file is larger than 5 MB', {
      suggestion: 'Split the file into parts of at most 5 MB.',
    }),
);

/** Image uploads: read after authentication (route middleware), at most 10 MB, never to disk. */
export const imageUpload = singleFile(
  IMAGE_UPLOAD_LIMIT_BYTES,
  () =>
    new AppError('too-large', 'PAYLOAD_TOO_LARGE', 'The image is larger than 10 MB', {
      suggestion: 'Resize or compress the image to at most 10 MB.',
    }),
);
