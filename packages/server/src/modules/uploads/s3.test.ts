import { readdirSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { startS3Server, type TestS3Server } from '../../../test/s3-server.js';
import { imageFixture as fixture, uploadImage } from '../../../test/uploads.js';
import { queryRows, sql } from '../../db/query.js';

let s3: TestS3Server;
let pigeon: TestPigeon;
beforeAll(async () => {
  s3 = await startS3Server();
  pigeon = await startTestPigeon({
    env: {
      UPLOADS_S3_BUCKET: s3.bucket,
      UPLOADS_S3_ENDPOINT: s3.endpoint,
      UPLOADS_S3_FORCE_PATH_STYLE: 'true',
      UPLOADS_S3_PREFIX: 'images/',
      UPLOADS_S3_ACCESS_KEY_ID: s3.accessKeyId,
      UPLOADS_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    },
  });
});
afterAll(async () => {
  await pigeon?.stop();
  await s3?.close();
});

describe('POST /uploads/image (S3-compatible storage)', () => {
  it('puts the image in the bucket under the prefix and serves it from PUBLIC_URL', async () => {
    const { project, auth } = await newProject(pigeon);
    const bytes = fixture('banner.webp');
    const res = await uploadImage(pigeon.url, auth, bytes, { name: 'banner.png', type: 'image/png' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ contentType: 'image/webp', size: bytes.length });
    expect(res.body.url).toBe(`${pigeon.url}/uploads/images/${res.body.id}.webp`);

    // In the bucket, read back with a client of the test's own.
    const client = new S3Client({
      region: 'us-east-1',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    const object = await client.send(
      new GetObjectCommand({ Bucket: s3.bucket, Key: `images/${project.id}/${res.body.id}.webp` }),
    );
    expect(object.ContentType).toBe('image/webp');
    expect(Buffer.from((await object.Body?.transformToByteArray()) ?? []).equals(bytes)).toBe(true);
    client.destroy();

    const served = await fetch(res.body.url);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/webp');
    expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true);
    // Nothing went to the local data dir.
    expect(() => readdirSync(join(pigeon.dataDir, 'uploads'))).toThrow();
  });

  it('records nothing when the store refuses the bytes', async () => {
    const { project, auth } = await newProject(pigeon);
    await s3.close(); // the store is gone
    const res = await uploadImage(pigeon.url, auth, fixture('logo.png'));
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('INTERNAL_SERVER_ERROR');
    const rows = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT count(*)::int AS n FROM uploads WHERE project_id = ${project.id}`,
    );
    expect(rows[0]?.n).toBe(0);
  });
});

/** An S3 endpoint that takes a PUT's bytes and answers only when told to (a store that is slow today). */
async function stallingStore() {
  let arrived: (req: IncomingMessage) => void = () => {};
  const put = new Promise<IncomingMessage>((resolve) => {
    arrived = resolve;
  });
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      if (req.method === 'PUT') {
        arrived(req);
        await released;
      }
      res.writeHead(200, { etag: '"stalled"' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { endpoint, put, release, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('POST /uploads/image while the store is slow', () => {
  it('holds no writing transaction open while the bytes are on their way, and records the image once they are stored', async () => {
    const store = await stallingStore();
    const slow = await startTestPigeon({
      env: {
        UPLOADS_S3_BUCKET: 'stalled',
        UPLOADS_S3_ENDPOINT: store.endpoint,
        UPLOADS_S3_FORCE_PATH_STYLE: 'true',
        UPLOADS_S3_ACCESS_KEY_ID: 'key',
        UPLOADS_S3_SECRET_ACCESS_KEY: 'secret',
      },
    });
    try {
      const { project, auth } = await newProject(slow);
      const pool = slow.deps.db.pool;
      const uploading = uploadImage(slow.url, auth, fixture('logo.png'));
      await store.put;
      // A transaction with a transaction id holds back every change-feed consumer of the server.
      const writers = await queryRows(
        pool,
        sql`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL`,
      );
      expect(writers).toEqual([]);
      const images = () =>
        queryRows<{ id: string }>(pool, sql`SELECT id FROM uploads WHERE project_id = ${project.id}::uuid`);
      expect(await images()).toEqual([]);
      store.release();
      const res = await uploading;
      expect(res.status).toBe(201);
      expect((await images()).map((r) => r.id)).toEqual([res.body.id]);
    } finally {
      store.release();
      await slow.stop();
      await store.close();
    }
  });
});
