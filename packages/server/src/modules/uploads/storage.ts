import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { StorageKind } from '@pigeon/contract';
import type { Config, S3Settings } from '../../config/index.js';

/**
 * Where uploaded images live. Keys are `<projectId>/<imageId>.<ext>`; Pigeon serves every image
 * itself (the bucket need not be public), so the public URL never depends on the store.
 */
export interface ImageStorage {
  kind: StorageKind;
  put(key: string, body: Buffer, contentType: string): Promise<void>;
  /** The bytes, or undefined when the key holds nothing. */
  get(key: string): Promise<Buffer | undefined>;
  delete(key: string): Promise<void>;
}

export function createImageStorage(config: Config['uploads']): ImageStorage {
  return config.s3 ? s3Storage(config.s3) : localStorage(config.localDir);
}

/** Files under the data dir (0600 in 0700 directories, as everything there), written atomically. */
function localStorage(root: string): ImageStorage {
  const path = (key: string) => join(root, key);
  return {
    kind: 'local',
    async put(key, body) {
      const target = path(key);
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      const partial = `${target}.partial`;
      await writeFile(partial, body, { mode: 0o600 });
      await rename(partial, target);
    },
    async get(key) {
      return readFile(path(key)).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      });
    },
    async delete(key) {
      await rm(path(key), { force: true });
    },
  };
}

/** The AWS SDK is loaded on first use: a Pigeon without S3 (or a process that never touches an upload) never loads it. */
function s3Storage(s3: S3Settings): ImageStorage {
  let opened: Promise<{ sdk: typeof import('@aws-sdk/client-s3'); client: import('@aws-sdk/client-s3').S3Client }>;
  const open = () => {
    opened ??= import('@aws-sdk/client-s3').then((sdk) => ({
      sdk,
      client: new sdk.S3Client({
        region: s3.region,
        endpoint: s3.endpoint,
        forcePathStyle: s3.forcePathStyle,
        credentials: s3.credentials,
        // Checksums only where S3 requires them: S3-compatible stores (MinIO, R2, older servers) do not
        // all accept the trailing checksums newer SDKs add by default.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        maxAttempts: 3,
      }),
    }));
    return opened;
  };
  const Key = (key: string) => `${s3.prefix}${key}`;
  return {
    kind: 's3',
    async put(key, body, contentType) {
      const { sdk, client } = await open();
      await client.send(
        new sdk.PutObjectCommand({ Bucket: s3.bucket, Key: Key(key), Body: body, ContentType: contentType }),
      );
    },
    async get(key) {
      const { sdk, client } = await open();
      try {
        const out = await client.send(new sdk.GetObjectCommand({ Bucket: s3.bucket, Key: Key(key) }));
        return out.Body ? Buffer.from(await out.Body.transformToByteArray()) : undefined;
      } catch (err) {
        if (err instanceof sdk.NoSuchKey) return undefined;
        throw err;
      }
    },
    async delete(key) {
      const { sdk, client } = await open();
      await client.send(new sdk.DeleteObjectCommand({ Bucket: s3.bucket, Key: Key(key) }));
    },
  };
}
