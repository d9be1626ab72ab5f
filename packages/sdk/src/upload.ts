import { PigeonError } from './errors.js';

/** The server's limit for one uploaded file (multer `fileSize`): 5 MB. */
export const MAX_UPLOAD_BYTES = 5 * 1024 * 1024;

/**
 * A file to upload:
 * - a `Blob` or `File`;
 * - bytes: a `Uint8Array` (a Node buffer is one) or an `ArrayBuffer`;
 * - a file path (Node only; `node:fs/promises` is loaded on demand, so browser bundles never need it);
 * - a stream: a web `ReadableStream`, or a Node `Readable` or any other async iterable of bytes or strings.
 *
 * Streams are read into memory, at most {@link MAX_UPLOAD_BYTES}. To upload text you already
 * have, wrap it: `new Blob([csv])` (a bare string is taken as a path).
 */
export type UploadSource =
  | Blob
  | Uint8Array
  | ArrayBuffer
  | string
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array | string>;

export interface UploadFile {
  blob: Blob;
  /** The file name found in the source (a path's last segment or a File's name), if any. */
  name?: string;
}

/** Reads `source` into a Blob, rejecting with `PAYLOAD_TOO_LARGE` once it exceeds `limit` bytes. */
export async function readUpload(source: UploadSource, limit = MAX_UPLOAD_BYTES): Promise<UploadFile> {
  if (typeof source === 'string') return readPath(source, limit);
  if (typeof Blob !== 'undefined' && source instanceof Blob) {
    checkSize(source.size, limit);
    const name = (source as Partial<File>).name;
    return { blob: source, name: typeof name === 'string' && name ? name : undefined };
  }
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    const bytes = source instanceof ArrayBuffer ? new Uint8Array(source) : (source as Uint8Array);
    checkSize(bytes.byteLength, limit);
    return { blob: new Blob([blobPart(bytes)]) };
  }
  if (isReadableStream(source)) return { blob: await readWebStream(source, limit) };
  if (isAsyncIterable(source)) return { blob: await readIterable(source, limit) };
  throw new TypeError(
    'Expected a Blob, File, Uint8Array, ArrayBuffer, file path, ReadableStream or Node Readable to upload',
  );
}

async function readPath(path: string, limit: number): Promise<UploadFile> {
  // The SDK's only Node module, loaded on first use; the comments tell bundlers to leave it alone.
  const fs = await import(/* webpackIgnore: true */ /* @vite-ignore */ 'node:fs/promises').catch((cause: unknown) => {
    throw new TypeError('Uploading a file path needs Node.js; in a browser pass a File or Blob', { cause });
  });
  checkSize((await fs.stat(path)).size, limit);
  const bytes = await fs.readFile(path);
  checkSize(bytes.byteLength, limit); // the file may have grown since stat
  return { blob: new Blob([blobPart(bytes)]), name: path.split(/[\\/]/).pop() || undefined };
}

async function readWebStream(stream: ReadableStream<Uint8Array>, limit: number): Promise<Blob> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const chunk = toBytes(value);
      size += chunk.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        tooLarge(limit);
      }
      chunks.push(chunk);
    }
  } finally {
    reader.releaseLock();
  }
  return new Blob(chunks.map(blobPart));
}

async function readIterable(iterable: AsyncIterable<Uint8Array | string>, limit: number): Promise<Blob> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Throwing inside `for await` calls the iterator's return(), which destroys a Node Readable.
  for await (const value of iterable) {
    const chunk = toBytes(value);
    size += chunk.byteLength;
    if (size > limit) tooLarge(limit);
    chunks.push(chunk);
  }
  return new Blob(chunks.map(blobPart));
}

function toBytes(value: unknown): Uint8Array {
  if (typeof value === 'string') return new TextEncoder().encode(value);
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError('A stream to upload must yield bytes (Uint8Array) or strings');
}

/** Blob wants views over a plain ArrayBuffer; copy the rare view over a SharedArrayBuffer. */
function blobPart(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes.buffer instanceof ArrayBuffer ? (bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(bytes);
}

function isReadableStream(value: unknown): value is ReadableStream<Uint8Array> {
  return typeof (value as ReadableStream | null)?.getReader === 'function';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as AsyncIterable<unknown> | null)?.[Symbol.asyncIterator] === 'function';
}

function checkSize(size: number, limit: number): void {
  if (size > limit) tooLarge(limit, size);
}

function tooLarge(limit: number, size?: number): never {
  const mb = limit / (1024 * 1024);
  throw new PigeonError({
    status: 0,
    code: 'PAYLOAD_TOO_LARGE',
    message:
      size === undefined
        ? `The file is larger than ${mb} MB, the upload limit`
        : `The file is ${size} bytes, larger than the ${mb} MB upload limit`,
    details: { limitBytes: limit, ...(size === undefined ? {} : { sizeBytes: size }) },
    suggestion: `Split the file into parts of at most ${mb} MB.`,
  });
}
