import { contract, IMAGE_UPLOAD_LIMIT_BYTES } from './contract.js';
import type { RequestOptions, Transport } from './transport.js';
import type { UploadedImage } from './types.js';
import { readUpload, type UploadSource } from './upload.js';

/** Options of `uploads.image`, besides the per-call ones. */
export interface ImageUploadOptions extends RequestOptions {
  /** File name sent with the upload; default the path's or File's name, else `image`. Informational only. */
  filename?: string;
}

/**
 * Image uploads (secret key), as `pigeon.uploads`: images for template bodies, stored by Pigeon and
 * served from its public URL.
 */
export class Uploads {
  constructor(private readonly transport: Transport) {}

  /**
   * Upload a JPEG, PNG, GIF or WebP image (at most 10 MB): a Blob or File, bytes, a file path (Node),
   * or a web or Node stream. The server recognises the format by the bytes (SVG is refused) and
   * answers its public `url`; the same bytes again answer the image already stored. Larger input
   * rejects with code `PAYLOAD_TOO_LARGE` before any request.
   */
  readonly image = async (file: UploadSource, options: ImageUploadOptions = {}): Promise<UploadedImage> => {
    const { filename, ...requestOptions } = options;
    const upload = await readUpload(file, IMAGE_UPLOAD_LIMIT_BYTES);
    const form = new FormData();
    form.append('file', upload.blob, filename ?? upload.name ?? 'image');
    return this.transport.call(contract.uploads.image, { body: form }, requestOptions);
  };
}
