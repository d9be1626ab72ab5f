import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';

import { imageFixture as fixture, uploadImage } from '../../../test/uploads.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon({ env: { UPLOADS_QUOTA_MB: '0.001' } }); // 1,049 bytes per project
});
afterAll(() => pigeon?.stop());

const storedFiles = () => {
  const root = join(pigeon.dataDir, 'uploads');
  try {
    return readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  } catch {
    return [];
  }
};

describe('POST /uploads/image (local storage)', () => {
  it('stores JPEG, PNG, GIF and WebP recognised by their bytes, and serves them with long cache headers', async () => {
    const { auth } = await newProject(pigeon);
    const cases = [
      ['photo.jpg', 'image/jpeg', 'jpg'],
      ['logo.png', 'image/png', 'png'],
      ['anim.gif', 'image/gif', 'gif'],
      ['banner.webp', 'image/webp', 'webp'],
    ] as const;
    for (const [file, contentType, ext] of cases) {
      const bytes = fixture(file);
      // The name and the declared type lie; the bytes decide.
      const res = await uploadImage(pigeon.url, auth, bytes, { name: 'picture.txt', type: 'text/plain' });
      expect(res.status, file).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        url: `${pigeon.url}/uploads/images/${res.body.id}.${ext}`,
        contentType,
        size: bytes.length,
        createdAt: expect.any(String),
      });
      const served = await fetch(res.body.url);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe(contentType);
      expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(served.headers.get('x-content-type-options')).toBe('nosniff');
      expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true);
      const etag = served.headers.get('etag') ?? '';
      expect((await fetch(res.body.url, { headers: { 'if-none-match': etag } })).status).toBe(304);
    }
    expect(storedFiles()).toHaveLength(4);
  });

  it('answers the stored image for the same bytes again, without storing or counting them twice', async () => {
    const { auth } = await newProject(pigeon);
    const first = await uploadImage(pigeon.url, auth, fixture('logo.png'));
    const again = await uploadImage(pigeon.url, auth, fixture('logo.png'), { name: 'other.png' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    // Another project gets its own copy.
    const other = await newProject(pigeon);
    const theirs = await uploadImage(pigeon.url, other.auth, fixture('logo.png'));
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(first.body.id);
  });

  it('refuses SVG, other formats, empty and missing files with clear 4xx, storing nothing', async () => {
    const { auth } = await newProject(pigeon);
    const before = storedFiles().length;
    const svg = await uploadImage(pigeon.url, auth, fixture('evil.svg'), { name: 'logo.png', type: 'image/png' });
    expect(svg.status).toBe(415);
    expect(svg.body.error).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.stringMatching(/SVG/) });
    const pdf = await uploadImage(pigeon.url, auth, Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\n'), {
      name: 'x.jpg',
      type: 'image/jpeg',
    });
    expect(pdf.status).toBe(415);
    expect(pdf.body.error.message).toMatch(/not a JPEG, PNG, GIF or WebP image.*application\/pdf/);
    const text = await uploadImage(pigeon.url, auth, Buffer.from('just some text'), { type: 'image/gif' });
    expect(text.status).toBe(415);
    expect((await uploadImage(pigeon.url, auth, Buffer.alloc(0))).status).toBe(422);
    const wrongField = await uploadImage(pigeon.url, auth, fixture('logo.png'), { field: 'image' });
    expect(wrongField.status).toBe(422);
    // untyped: wrong on purpose (a JSON body where the file belongs)
    const noFile = await pigeon.request('POST', '/uploads/image', { headers: auth, body: {} });
    expectEnvelope(noFile, 422, 'VALIDATION_ERROR');
    expect(storedFiles()).toHaveLength(before);
  });

  it('refuses files over 10 MB with 413, and the project quota with 403 STORAGE_QUOTA_EXCEEDED', async () => {
    const { auth } = await newProject(pigeon);
    const before = storedFiles().length;
    const huge = Buffer.concat([fixture('logo.png'), Buffer.alloc(10 * 1024 * 1024)]);
    const tooLarge = await uploadImage(pigeon.url, auth, huge);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: expect.stringMatching(/10 MB/) });
    // The quota is 1,049 bytes: the JPEG (414), the PNG (362) and the GIF (74) fit; 662 more do not.
    const sizes = ['photo.jpg', 'logo.png', 'anim.gif'].map((f) => fixture(f).length);
    for (const f of ['photo.jpg', 'logo.png', 'anim.gif']) {
      expect((await uploadImage(pigeon.url, auth, fixture(f))).status).toBe(201);
    }
    const used = sizes.reduce((a, b) => a + b, 0);
    const over = await uploadImage(pigeon.url, auth, Buffer.concat([fixture('logo.png'), Buffer.alloc(300)]));
    expect(over.status).toBe(403);
    expect(over.body.error).toMatchObject({
      code: 'STORAGE_QUOTA_EXCEEDED',
      details: { quotaBytes: 1049, usedBytes: used, fileBytes: 662 },
    });
    expect(storedFiles()).toHaveLength(before + 3);
  });

  it('needs a secret key, keeps unknown image names 404, and is per project', async () => {
    const { project, auth } = await newProject(pigeon);
    const pk = { authorization: `Bearer ${project.publicKey}` };
    expect((await uploadImage(pigeon.url, pk, fixture('logo.png'))).status).toBe(401);
    expect((await uploadImage(pigeon.url, {}, fixture('logo.png'))).status).toBe(401);
    const stored = await uploadImage(pigeon.url, auth, fixture('anim.gif'));
    const wrongExt = stored.body.url.replace(/\.gif$/, '.png');
    expect((await fetch(wrongExt)).status).toBe(404);
    expect((await fetch(`${pigeon.url}/uploads/images/0190a0b0-0000-7000-8000-000000000000.gif`)).status).toBe(404);
    expect((await fetch(`${pigeon.url}/uploads/images/..%2Fsecrets.json`)).status).toBe(404);
  });
});
