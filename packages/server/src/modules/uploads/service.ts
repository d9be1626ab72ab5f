import { createHash } from 'node:crypto';
import { IMAGE_UPLOAD_LIMIT_BYTES, type ImageContentType } from '@pigeon/contract';
import { uuidv7 } from 'uuidv7';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { AppError, validationFailed } from '../../kit/errors.js';
import type { ImageStorage } from './storage.js';

/** What each accepted format is stored and served as (animated PNG is a PNG). */
const ACCEPTED: Record<string, { contentType: ImageContentType; ext: string }> = {
  'image/jpeg': { contentType: 'image/jpeg', ext: 'jpg' },
  'image/png': { contentType: 'image/png', ext: 'png' },
  'image/apng': { contentType: 'image/png', ext: 'png' },
  'image/gif': { contentType: 'image/gif', ext: 'gif' },
  'image/webp': { contentType: 'image/webp', ext: 'webp' },
};
export const IMAGE_EXTENSIONS = new Set(Object.values(ACCEPTED).map((a) => a.ext));

interface UploadRow {
  id: string;
  storage_key: string;
  content_type: ImageContentType;
  size: string;
  created_at: Date;
}

export const imagePath = (row: { id: string; storage_key: string }) =>
  `/uploads/images/${row.id}.${row.storage_key.split('.').pop()}`;

const toDto = (row: UploadRow, publicUrl: string) => ({
  id: row.id,
  url: `${publicUrl}${imagePath(row)}`,
  contentType: row.content_type,
  size: Number(row.size),
  createdAt: row.created_at.toISOString(),
});

/** SVG is text (XML), so no signature finds it: it is named in the refusal because it can carry scripts. */
const looksLikeSvg = (bytes: Buffer) =>
  /<svg[\s>]/i.test(
    bytes
      .subarray(0, 4096)
      .toString('utf8')
      .replace(/^\uFEFF/, ''),
  );

/** The image's format from its bytes; anything but JPEG, PNG, GIF and WebP is a 415. */
async function detectFormat(bytes: Buffer) {
  // Loaded on the first upload (its token readers and MIME tables are ~2 MB of RSS).
  const { fileTypeFromBuffer } = await import('file-type');
  const detected = await fileTypeFromBuffer(bytes);
  const accepted = detected && ACCEPTED[detected.mime];
  if (accepted) return accepted;
  if (looksLikeSvg(bytes)) {
    throw new AppError(
      'unsupported-type',
      'UNSUPPORTED_MEDIA_TYPE',
      'SVG images are not accepted: they can carry scripts',
      {
        suggestion: 'Export the image as PNG or WebP and upload that.',
      },
    );
  }
  throw new AppError(
    'unsupported-type',
    'UNSUPPORTED_MEDIA_TYPE',
    `The file is not a JPEG, PNG, GIF or WebP image (its bytes say ${detected ? detected.mime : 'unknown format'})`,
    { details: { detected: detected?.mime ?? null } },
  );
}

/** The app's deps with the image storage the app made once (local directory or S3). */
export type ImageDeps = Pick<AppDeps, 'db' | 'config'> & { storage: ImageStorage };

/** The project's image with these bytes, if it has one, and the bytes its images take. */
async function projectImages(db: Queryable, projectId: string, sha256: string) {
  const [existing] = await queryRows<UploadRow>(
    db,
    sql`SELECT * FROM uploads WHERE project_id = ${projectId}::uuid AND sha256 = ${sha256}`,
  );
  const [usage] = await queryRows<{ used: string }>(
    db,
    sql`SELECT coalesce(sum(size), 0)::text AS used FROM uploads WHERE project_id = ${projectId}::uuid`,
  );
  return { existing, used: Number(usage?.used ?? 0) };
}

/**
 * Stores an image for a project. The format comes from the bytes; the same bytes again return the
 * stored image (200). The bytes are stored first, outside any transaction: a slow store (S3 can
 * take seconds) must not hold a writing transaction open, which would hold back every change-feed
 * consumer of the server. Then, under a per-project advisory lock, the quota and the duplicate are
 * checked again and the row inserted, so concurrent uploads cannot overshoot the quota. Whatever
 * ends without a row removes the stored bytes; a crash in between can leave stored bytes without
 * a row (never a row without its bytes).
 */
export async function uploadImage(deps: ImageDeps, projectId: string, bytes: Buffer | undefined) {
  const { quotaBytes } = deps.config.uploads;
  if (!bytes || bytes.length === 0) {
    throw validationFailed(
      [{ field: 'file', message: bytes ? 'The file is empty' : 'Required', code: 'invalid_type' }],
      'Upload the image as the multipart field "file"',
    );
  }
  if (bytes.length > IMAGE_UPLOAD_LIMIT_BYTES) throw imageTooLarge();
  const format = await detectFormat(bytes);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const publicUrl = deps.config.http.publicUrl;
  // Checked first without the lock, so a duplicate or an upload over the quota stores nothing.
  const before = await projectImages(deps.db.pool, projectId, sha256);
  if (before.existing) return { created: false, image: toDto(before.existing, publicUrl) };
  if (before.used + bytes.length > quotaBytes) throw quotaExceeded(quotaBytes, before.used, bytes.length);

  const id = uuidv7();
  const key = `${projectId}/${id}.${format.ext}`;
  await deps.storage.put(key, bytes, format.contentType);
  let inserted = false;
  try {
    const result = await inTransaction(deps.db.pool, async (client) => {
      await queryRows(client, sql`SELECT pg_advisory_xact_lock(hashtext(${`uploads:${projectId}`}))`);
      const now = await projectImages(client, projectId, sha256);
      if (now.existing) return { created: false, row: now.existing };
      if (now.used + bytes.length > quotaBytes) throw quotaExceeded(quotaBytes, now.used, bytes.length);
      const [row] = await queryRows<UploadRow>(
        client,
        sql`INSERT INTO uploads (id, project_id, storage_key, content_type, size, sha256)
            VALUES (${id}::uuid, ${projectId}::uuid, ${key}, ${format.contentType}, ${bytes.length}, ${sha256})
            RETURNING *`,
      );
      return { created: true, row: row as UploadRow };
    });
    inserted = result.created;
    return { created: result.created, image: toDto(result.row, publicUrl) };
  } finally {
    if (!inserted) await deps.storage.delete(key).catch(() => {});
  }
}

export const imageTooLarge = () =>
  new AppError('too-large', 'PAYLOAD_TOO_LARGE', 'The image is larger than 10 MB', {
    suggestion: 'Resize or compress the image to at most 10 MB.',
  });

const mb = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;

function quotaExceeded(quotaBytes: number, usedBytes: number, fileBytes: number) {
  return new AppError(
    'forbidden',
    'STORAGE_QUOTA_EXCEEDED',
    `Storing this image (${mb(fileBytes)}) would exceed the project's image storage of ${mb(quotaBytes)} (${mb(usedBytes)} used)`,
    {
      details: { quotaBytes, usedBytes, fileBytes },
      suggestion: 'Use smaller images, or ask the operator to raise UPLOADS_QUOTA_MB.',
    },
  );
}

/** An image to serve by its public file name (`<id>.<ext>`) with its bytes, if both exist. */
export async function readImage(deps: ImageDeps, fileName: string) {
  const image = await findImage(deps.db.pool, fileName);
  const bytes = image && (await deps.storage.get(image.storage_key));
  return image && bytes ? { image, bytes } : undefined;
}

async function findImage(db: Queryable, fileName: string) {
  const match = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([a-z]+)$/.exec(fileName);
  if (!match || !IMAGE_EXTENSIONS.has(match[2] as string)) return undefined;
  const [row] = await queryRows<UploadRow & { sha256: string }>(
    db,
    sql`SELECT * FROM uploads WHERE id = ${match[1]}::uuid`,
  );
  return row && imagePath(row) === `/uploads/images/${fileName}` ? row : undefined;
}
