import { readFileSync } from 'node:fs';
import { HttpResponse, http } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { Pigeon, PigeonError, type PigeonErrorCode, SDK_VERSION } from '../src/index.js';
import { BASE, mockPigeonApi, clientOptions as options } from './msw-server.js';

const { server } = mockPigeonApi();

const tracked = {
  contact: '0190c2a4-7b7e-7cc0-9a3f-1c2d3e4f5a6b',
  event: '0190c2a4-7b7e-7cc0-9a3f-1c2d3e4f5a6c',
  timestamp: '2026-11-22T10:00:00.000Z',
};

/** The server's 409 for a reused key; `original` is the first request's status and, for a 2xx, its body. */
const reused = (key: string, original: { status: number | null; body?: unknown }) =>
  HttpResponse.json(
    {
      success: false,
      error: {
        code: 'IDEMPOTENCY_KEY_REUSED',
        message: 'This Idempotency-Key was already used',
        statusCode: 409,
        requestId: tracked.contact,
        details: {
          key,
          originalRequest: 'POST /v1/track',
          originalRequestAt: tracked.timestamp,
          originalStatusCode: original.status,
          ...(original.body === undefined ? {} : { originalResponse: original.body }),
        },
      },
      message: 'This Idempotency-Key was already used',
      timestamp: tracked.timestamp,
    },
    { status: 409 },
  );

/** First attempt: the server "acts" but the response is lost; later attempts answer with `then`. */
function lostFirstResponse(then: (key: string) => Response) {
  const keys: string[] = [];
  server.use(
    http.post(`${BASE}/v1/track`, ({ request }) => {
      keys.push(request.headers.get('idempotency-key') ?? '');
      return keys.length === 1 ? HttpResponse.error() : then(keys[0] ?? '');
    }),
  );
  return keys;
}

describe('a retry that meets 409 IDEMPOTENCY_KEY_REUSED', () => {
  it('returns the original response when the first attempt succeeded', async () => {
    const keys = lostFirstResponse((key) => reused(key, { status: 200, body: { success: true, data: tracked } }));
    const pigeon = new Pigeon({ apiKey: 'pk_public', ...options });
    expect(await pigeon.events.track({ email: 'a@example.com', event: 'paid' })).toEqual(tracked);
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
  });

  it('throws while the original is in flight, or when it failed', async () => {
    const pigeon = new Pigeon({ apiKey: 'pk_public', ...options });
    lostFirstResponse((key) => reused(key, { status: null }));
    await expect(pigeon.events.track({ email: 'a@example.com', event: 'paid' })).rejects.toMatchObject({
      status: 409,
      code: 'IDEMPOTENCY_KEY_REUSED',
      details: { originalStatusCode: null },
    });
    server.resetHandlers();
    lostFirstResponse((key) => reused(key, { status: 500, body: { success: false } }));
    await expect(pigeon.events.track({ email: 'a@example.com', event: 'paid' })).rejects.toMatchObject({
      status: 409,
    });
  });

  it("throws on a first attempt's 409: the key was used by another call", async () => {
    server.use(
      http.post(`${BASE}/v1/track`, ({ request }) =>
        reused(request.headers.get('idempotency-key') ?? '', { status: 200, body: { success: true, data: tracked } }),
      ),
    );
    const pigeon = new Pigeon({ apiKey: 'pk_public', ...options });
    const error = await pigeon.events
      .track({ email: 'a@example.com', event: 'paid' }, { idempotencyKey: 'order-1' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect((error as PigeonError).details?.originalResponse).toEqual({ success: true, data: tracked });
  });
});

describe('identity', () => {
  it('sends User-Agent pigeon-sdk/<version> node/<version>', async () => {
    const agents: Array<string | null> = [];
    server.use(
      http.get(`${BASE}/health`, ({ request }) => {
        agents.push(request.headers.get('user-agent'));
        return HttpResponse.json({ status: 'ok', database: 'ok', version: '1' });
      }),
    );
    await new Pigeon({ apiKey: 'sk_x', ...options }).system.health().catch(() => undefined);
    expect(agents[0]).toBe(`pigeon-sdk/${SDK_VERSION} node/${process.versions.node}`);
  });

  it("keeps SDK_VERSION equal to package.json's version", () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(SDK_VERSION).toBe(pkg.version);
  });

  it('types err.code as the union of server and SDK codes, and names the class PigeonError', () => {
    expectTypeOf<PigeonError['code']>().toEqualTypeOf<PigeonErrorCode>();
    expectTypeOf<'IDEMPOTENCY_KEY_REUSED'>().toMatchTypeOf<PigeonErrorCode>();
    expectTypeOf<'NETWORK_ERROR'>().toMatchTypeOf<PigeonErrorCode>();
    expectTypeOf<'NO_SUCH_CODE'>().not.toMatchTypeOf<PigeonErrorCode>();
    const error = new PigeonError({ status: 0, code: 'TIMEOUT', message: 'x' });
    expect(error.name).toBe('PigeonError');
    expect(PigeonError.name).toBe('PigeonError');
  });
});
