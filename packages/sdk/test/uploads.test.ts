import { HttpResponse } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { PigeonError, type UploadedImage } from '../src/index.js';
import { BASE, mockPigeonApi } from './msw-server.js';

const { server, route, pigeon } = mockPigeonApi();

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const image: UploadedImage = {
  id: '0190c2a4-7b7e-7cc0-9a3f-000000000001',
  url: `${BASE}/uploads/images/0190c2a4-7b7e-7cc0-9a3f-000000000001.png`,
  contentType: 'image/png',
  size: PNG.length,
  createdAt: '2026-11-25T10:00:00.000Z',
};

describe('uploads.image', () => {
  it('POSTs the bytes as the multipart field `file` and resolves with the stored image', async () => {
    const requests = route('post', '/uploads/image', () => HttpResponse.json(image, { status: 201 }));
    const result = await pigeon().uploads.image(new Blob([PNG], { type: 'image/png' }), { filename: 'logo.png' });
    expectTypeOf(result).toEqualTypeOf<UploadedImage>();
    expect(result).toEqual(image);
    expect(requests[0]?.headers.get('content-type')).toMatch(/^multipart\/form-data; boundary=/);
    const form = await requests[0]?.formData();
    const file = form?.get('file') as File;
    expect(file.name).toBe('logo.png');
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(PNG);
  });

  it('answers 200 for bytes already stored, like 201', async () => {
    route('post', '/uploads/image', () => HttpResponse.json(image, { status: 200 }));
    expect(await pigeon().uploads.image(PNG)).toEqual(image);
  });

  it('refuses more than 10 MB before any request, and surfaces a 415 as PigeonError', async () => {
    const requests = route('post', '/uploads/image', () => HttpResponse.json(image, { status: 201 }));
    const err = await pigeon()
      .uploads.image(new Uint8Array(10 * 1024 * 1024 + 1))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PigeonError);
    expect((err as PigeonError).code).toBe('PAYLOAD_TOO_LARGE');
    expect(requests).toHaveLength(0);
    server.resetHandlers();
    route('post', '/uploads/image', () =>
      HttpResponse.json(
        {
          success: false,
          error: {
            code: 'UNSUPPORTED_MEDIA_TYPE',
            message: 'SVG images are not accepted: they can carry scripts',
            statusCode: 415,
            requestId: '0190c2a4-7b7e-7cc0-9a3f-1c2d3e4f5a6b',
          },
          message: 'SVG images are not accepted: they can carry scripts',
          timestamp: '2026-11-25T10:00:00.000Z',
        },
        { status: 415 },
      ),
    );
    const refused = await pigeon()
      .uploads.image(new TextEncoder().encode('<svg/>'))
      .catch((e: unknown) => e);
    expect((refused as PigeonError).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect((refused as PigeonError).status).toBe(415);
  });
});
