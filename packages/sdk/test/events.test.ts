import { HttpResponse, http } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createPigeon, Pigeon, type PublicPigeon } from '../src/index.js';
import { BASE, mockPigeonApi, clientOptions as options } from './msw-server.js';

const { server } = mockPigeonApi();

const tracked = {
  contact: '0190c2a4-7b7e-7cc0-9a3f-1c2d3e4f5a6b',
  event: '0190c2a4-7b7e-7cc0-9a3f-1c2d3e4f5a6c',
  timestamp: '2026-11-22T10:00:00.000Z',
};
const envelope = (status: number, code: string) =>
  HttpResponse.json(
    {
      success: false,
      error: { code, message: code, statusCode: status, requestId: tracked.contact },
      timestamp: tracked.timestamp,
    },
    { status },
  );

function recordTrack(responses: Array<() => Response>) {
  const seen: Array<{ key: string | null; auth: string | null; body: unknown }> = [];
  server.use(
    http.post(`${BASE}/v1/track`, async ({ request }) => {
      seen.push({
        key: request.headers.get('idempotency-key'),
        auth: request.headers.get('authorization'),
        body: await request.json(),
      });
      return (responses[Math.min(seen.length, responses.length) - 1] as () => Response)();
    }),
  );
  return seen;
}

describe('events.track', () => {
  it('unwraps the success envelope and sends an Idempotency-Key on every call', async () => {
    const seen = recordTrack([() => HttpResponse.json({ success: true, data: tracked })]);
    const pigeon = new Pigeon({ apiKey: 'pk_public', ...options });
    expect(await pigeon.events.track({ email: 'a@example.com', event: 'signed-up' })).toEqual(tracked);
    expect(seen[0]?.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[0]?.auth).toBe('Bearer pk_public');
  });

  it('retries a 5xx and a network failure with the same key, so the server records the event once', async () => {
    const seen = recordTrack([
      () => envelope(503, 'UNAVAILABLE'),
      () => HttpResponse.error(),
      () => HttpResponse.json({ success: true, data: tracked }),
    ]);
    const pigeon = new Pigeon({ apiKey: 'pk_public', ...options });
    await pigeon.events.track({ email: 'a@example.com', event: 'paid' });
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
  });

  it('uses a caller-given key, and a new key for each separate call', async () => {
    const seen = recordTrack([() => HttpResponse.json({ success: true, data: tracked })]);
    const pigeon = new Pigeon({ apiKey: 'sk_secret', ...options });
    await pigeon.events.track({ email: 'a@example.com', event: 'x' }, { idempotencyKey: 'order-42' });
    await pigeon.events.track({ email: 'a@example.com', event: 'x' });
    await pigeon.events.track({ email: 'a@example.com', event: 'x' });
    expect(seen.map((s) => s.key)[0]).toBe('order-42');
    expect(seen[1]?.key).not.toBe(seen[2]?.key);
  });

  it('makes its keys in time order (UUID version 7), so they reach the server sorted', async () => {
    const seen = recordTrack([() => HttpResponse.json({ success: true, data: tracked })]);
    const pigeon = new Pigeon({ apiKey: 'pk_public', ...options });
    for (let i = 0; i < 3; i++) {
      await pigeon.events.track({ email: 'a@example.com', event: 'x' });
      await new Promise((r) => setTimeout(r, 2)); // a later millisecond
    }
    const keys = seen.map((s) => s.key ?? '');
    for (const key of keys)
      expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...keys].sort()).toEqual(keys);
    expect(new Set(keys).size).toBe(3);
  });

  it('does not retry a validation error', async () => {
    const seen = recordTrack([() => envelope(422, 'VALIDATION_ERROR')]);
    const pigeon = new Pigeon({ apiKey: 'pk_public', ...options });
    await expect(pigeon.events.track({ email: 'a@example.com', event: 'email.sent' })).rejects.toMatchObject({
      status: 422,
      code: 'VALIDATION_ERROR',
    });
    expect(seen).toHaveLength(1);
  });
});

describe('createPigeon', () => {
  it('types a public-key client as tracking only', async () => {
    recordTrack([() => HttpResponse.json({ success: true, data: tracked })]);
    const browser = createPigeon({ apiKey: 'pk_0123', ...options });
    expectTypeOf(browser).toEqualTypeOf<PublicPigeon>();
    expect(Object.keys(browser)).toEqual(['events']);
    expect(Object.keys(browser.events)).toEqual(['track']);
    expect(await browser.events.track({ email: 'b@example.com', event: 'view' })).toEqual(tracked);
    const server = createPigeon({ apiKey: 'sk_0123', ...options });
    expectTypeOf(server).toEqualTypeOf<Pigeon>();
    expect(server).toBeInstanceOf(Pigeon);
  });
});
