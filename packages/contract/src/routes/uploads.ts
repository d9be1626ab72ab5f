import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, Timestamp } from '../common.js';
import { meta } from '../meta.js';

const c = initContract();

/** The formats `POST /uploads/image` accepts, recognised by their bytes. */
export const ImageContentType = z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
export type ImageContentType = z.infer<typeof ImageContentType>;

/** Spec-free limit of one image (the issue's): 10 MB. */
export const IMAGE_UPLOAD_LIMIT_BYTES = 10 * 1024 * 1024;

const uploadedImageObject = z.object({
  id: z.string().uuid(),
  url: z.string().url().describe('Public URL on PUBLIC_URL, served with a one-year immutable cache'),
  contentType: ImageContentType.describe('Detected from the bytes, not from the name or the declared type'),
  size: z.number().int().describe('Bytes'),
  createdAt: Timestamp,
});
type UploadedImageObject = typeof uploadedImageObject;
/** Named so declaration files refer to it rather than spell it out per response. */
export interface UploadedImageSchema extends UploadedImageObject {}
export const UploadedImage: UploadedImageSchema = uploadedImageObject;

export const uploadsContract = c.router(
  {
    image: {
      method: 'POST',
      path: '/uploads/image',
      summary: 'Upload an image for template bodies (multipart field `file`, at most 10 MB); returns its public URL',
      description:
        "JPEG, PNG, GIF or WebP, recognised by the bytes; SVG and anything else is refused (415). Counts against the project's storage quota (403 `STORAGE_QUOTA_EXCEEDED`). The same bytes uploaded again answer 200 with the existing image.",
      metadata: meta({ auth: 'dashboard', permission: 'project.use' }),
      contentType: 'multipart/form-data',
      body: z.object({ file: z.unknown().describe('The image file (binary)') }),
      responses: {
        200: UploadedImage,
        201: UploadedImage,
        403: ErrorEnvelope,
        413: ErrorEnvelope,
        415: ErrorEnvelope,
        ...commonErrors,
      },
    },
  },
  { strictStatusCodes: true },
);

export const uploadSchemas = { UploadedImage };
