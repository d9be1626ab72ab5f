import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// s3rver ships no types; this file is the one place that touches it.
// @ts-expect-error untyped CommonJS module
import S3rver from 's3rver';

export interface TestS3Server {
  /** `http://127.0.0.1:<port>`: point UPLOADS_S3_ENDPOINT at it (path-style). */
  endpoint: string;
  bucket: string;
  /** Credentials s3rver checks signatures against. */
  accessKeyId: string;
  secretAccessKey: string;
  close(): Promise<void>;
}

/** A real S3-compatible HTTP server (s3rver, objects on disk in a temporary directory) with one bucket. */
export async function startS3Server(bucket = 'pigeon-images'): Promise<TestS3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'pigeon-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const address: { port: number } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
