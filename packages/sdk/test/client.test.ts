import { initContract } from '@ts-rest/core';
import { delay, HttpResponse, http } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { withIdempotencyKey } from '../src/idempotency.js';
import { type Health, Pigeon, PigeonError } from '../src/index.js';
import { Transport, type TransportConfig } from '../src/transport.js';
import { BASE, mockPigeonApi, requestId } from './msw-server.js';

const { server } = mockPigeonApi();

const health: Health = { status: 'ok', database: 'up', version: '0.1.0', uptimeSeconds: 12 };

const pigeon = (options: Partial<ConstructorParameters<typeof Pigeon>[0]> = {}) =>
  new Pigeon({ apiKey: 'sk_test', baseUrl: BASE, retryBaseDelayMs: 1, retryMaxDelayMs: 5, ...options });

const transport = (config: Partial<TransportConfig> = {}) =>
  new Transport({
    auth: { apiKey: 'sk_test' },
    baseUrl: BASE,
    fetch: (input, init) => globalThis.fetch(input, init),
    maxRetries: 3,
    timeoutMs: 5_000,
    retryBaseDelayMs: 1,
    retryMaxDelayMs: 5,
    ...config,
  });

/** Registers a handler that answers with `responses[n]` on the n-th call (the last one repeats). */
function sequence(method: 'get' | 'post', path: string, responses: Array<() => Response>) {
  const requests: Request[] = [];
  server.use(
    http[method](`${BASE}${path}`, ({ request }) => {
      requests.push(request);
      const next = responses[Math.min(requests.length, responses.length) - 1];
      return next?.() ?? HttpResponse.json({}, { status: 500 });
    }),
  );
  return requests;
}

const envelope = (status: number, code: string, extra: Record<string, unknown> = {}) =>
  HttpResponse.json(
    {
      success: false,
      error: { code, message: `${code} happened`, statusCode: status, requestId, ...extra },
      timestamp: new Date().toISOString(),
    },
    { status },
  );

// Routes that are not in the contract yet, to exercise params, query and POST bodies.
const c = initContract();
const fake = c.router({
  getThing: {
    method: 'GET',
    path: '/things/:id',
    query: z.object({ tag: z.string().optional() }),
    responses: { 200: z.object({ id: z.string() }) },
  },
  createThing: {
    method: 'POST',
    path: '/things',
    body: z.object({ name: z.string() }),
    responses: { 201: z.object({ id: z.string() }) },
  },
  uploadThing: {
    method: 'POST',
    path: '/things/upload',
    contentType: 'multipart/form-data',
    body: z.object({ file: z.unknown(), note: z.string().optional() }),
    responses: { 202: z.object({ id: z.string() }) },
  },
});

describe('Pigeon.system.health', () => {
  it('returns the typed 2xx body and sends the API key', async () => {
    const requests = sequence('get', '/health', [() => HttpResponse.json(health)]);
    const result = await pigeon().system.health();
    expect(result).toEqual(health);
    expectTypeOf(result).toEqualTypeOf<Health>();
    expect(requests[0]?.headers.get('authorization')).toBe('Bearer sk_test');
  });

  it('uses globalThis.fetch looked up at call time, or the fetch it is given', async () => {
    const calls: string[] = [];
    const fetch: typeof globalThis.fetch = async (input) => {
      calls.push(String(input));
      return HttpResponse.json(health);
    };
    await pigeon({ fetch, baseUrl: 'https://api.example.com/pigeon/' }).system.health();
    expect(calls).toEqual(['https://api.example.com/pigeon/health']);
  });

  it('requires an API key', () => {
    expect(() => new Pigeon({ apiKey: '' })).toThrow(TypeError);
  });
});

describe('errors', () => {
  it('builds a PigeonError from the envelope, with every field, and does not retry a 422', async () => {
    const errors = [{ field: 'email', message: 'Invalid email', code: 'invalid_string', received: 'nope' }];
    const requests = sequence('get', '/health', [
      () => envelope(422, 'VALIDATION_ERROR', { errors, details: { hint: 1 }, suggestion: 'Fix the email' }),
    ]);
    const error = await pigeon()
      .system.health()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({
      name: 'PigeonError',
      status: 422,
      code: 'VALIDATION_ERROR',
      message: 'VALIDATION_ERROR happened',
      requestId,
      errors,
      details: { hint: 1 },
      suggestion: 'Fix the email',
    });
    expect(requests).toHaveLength(1);
  });

  it('builds a BAD_REQUEST PigeonError from a bare { error } body, not retried', async () => {
    const requests = sequence('get', '/health', [
      () => HttpResponse.json({ error: 'Name is required' }, { status: 400, headers: { 'X-Request-ID': requestId } }),
    ]);
    await expect(pigeon().system.health()).rejects.toMatchObject({
      status: 400,
      code: 'BAD_REQUEST',
      message: 'Name is required',
      requestId,
    });
    expect(requests).toHaveLength(1);
  });

  it('names a non-JSON error body by its status', async () => {
    sequence('get', '/health', [() => new HttpResponse('<html>Bad gateway</html>', { status: 502 })]);
    await expect(pigeon({ maxRetries: 0 }).system.health()).rejects.toMatchObject({
      status: 502,
      code: 'BAD_GATEWAY',
      body: '<html>Bad gateway</html>',
    });
  });

  it('reports a timeout as status 0, code TIMEOUT', async () => {
    server.use(
      http.get(`${BASE}/health`, async () => {
        await delay(500);
        return HttpResponse.json(health);
      }),
    );
    await expect(pigeon({ timeoutMs: 20, maxRetries: 0 }).system.health()).rejects.toMatchObject({
      status: 0,
      code: 'TIMEOUT',
    });
  });

  it('times out a stalled call while a call that started with it completes', async () => {
    server.use(
      http.get(`${BASE}/health`, async () => {
        await delay(500);
        return HttpResponse.json(health);
      }),
      http.get(`${BASE}/config`, () => HttpResponse.json({ features: {} })),
    );
    const client = pigeon({ timeoutMs: 100, maxRetries: 0 });
    const [stalled, quick] = await Promise.allSettled([client.system.health(), client.system.config()]);
    expect(quick).toMatchObject({ status: 'fulfilled', value: { features: {} } });
    expect(stalled).toMatchObject({ status: 'rejected', reason: { status: 0, code: 'TIMEOUT' } });
  });

  it('rejects with the abort reason when the caller aborts, without retrying', async () => {
    const requests = sequence('get', '/health', [() => HttpResponse.json({}, { status: 500 })]);
    const controller = new AbortController();
    const call = pigeon({ retryBaseDelayMs: 1_000, retryMaxDelayMs: 1_000 }).system.health({
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 50);
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(requests).toHaveLength(1);
  });
});

describe('retries', () => {
  it('honours Retry-After on a 429, then succeeds', async () => {
    const requests = sequence('get', '/health', [rateLimited, () => HttpResponse.json(health)]);
    const started = Date.now();
    await expect(pigeon().system.health()).resolves.toEqual(health);
    expect(requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('retries a 500 up to maxRetries, then throws', async () => {
    const requests = sequence('get', '/health', [() => envelope(500, 'INTERNAL_SERVER_ERROR')]);
    await expect(pigeon({ maxRetries: 2 }).system.health()).rejects.toMatchObject({
      status: 500,
      code: 'INTERNAL_SERVER_ERROR',
    });
    expect(requests).toHaveLength(3);
  });

  it('retries network errors', async () => {
    const requests = sequence('get', '/health', [() => HttpResponse.error(), () => HttpResponse.json(health)]);
    await expect(pigeon().system.health()).resolves.toEqual(health);
    expect(requests).toHaveLength(2);
  });

  it('throws NETWORK_ERROR when the network keeps failing', async () => {
    sequence('get', '/health', [() => HttpResponse.error()]);
    await expect(pigeon({ maxRetries: 1 }).system.health()).rejects.toMatchObject({ status: 0, code: 'NETWORK_ERROR' });
  });

  it('does not retry a POST without an Idempotency-Key on 5xx', async () => {
    const requests = sequence('post', '/things', [() => envelope(500, 'INTERNAL_SERVER_ERROR')]);
    await expect(transport().call(fake.createThing, { body: { name: 'x' } })).rejects.toMatchObject({ status: 500 });
    expect(requests).toHaveLength(1);
  });

  it('retries a POST with a generated Idempotency-Key, sending the same key each attempt', async () => {
    const requests = sequence('post', '/things', [
      () => envelope(503, 'SERVICE_UNAVAILABLE'),
      () => HttpResponse.error(),
      () => HttpResponse.json({ id: 't1' }, { status: 201 }),
    ]);
    const created = await transport().call(fake.createThing, { body: { name: 'x' } }, withIdempotencyKey());
    expect(created).toEqual({ id: 't1' });
    const keys = requests.map((r) => r.headers.get('idempotency-key'));
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await requests[0]?.json()).toEqual({ name: 'x' });
    expect(requests[0]?.headers.get('content-type')).toBe('application/json');
  });

  it('keeps a caller-supplied Idempotency-Key', async () => {
    const requests = sequence('post', '/things', [() => HttpResponse.json({ id: 't1' }, { status: 201 })]);
    await transport().call(
      fake.createThing,
      { body: { name: 'x' } },
      withIdempotencyKey({ idempotencyKey: 'order-42' }),
    );
    expect(requests[0]?.headers.get('idempotency-key')).toBe('order-42');
  });

  it('retries a POST on 429 even without a key (the request was refused, not performed)', async () => {
    const requests = sequence('post', '/things', [
      () => HttpResponse.json({}, { status: 429, headers: { 'Retry-After': '0' } }),
      () => HttpResponse.json({ id: 't1' }, { status: 201 }),
    ]);
    await expect(transport().call(fake.createThing, { body: { name: 'x' } })).resolves.toEqual({ id: 't1' });
    expect(requests).toHaveLength(2);
  });
});

describe('request building', () => {
  it('URL-encodes path parameters and query values', async () => {
    const requests = sequence('get', '/things/:id', [() => HttpResponse.json({ id: 'a/b c' })]);
    const thing = await transport().call(fake.getThing, { params: { id: 'a/b c' }, query: { tag: 'x&y' } });
    expectTypeOf(thing).toEqualTypeOf<{ id: string }>();
    expect(requests[0]?.url).toBe(`${BASE}/things/a%2Fb%20c?tag=x%26y`);
  });

  it('sends multipart bodies (FormData, or a plain object of a multipart route) with the boundary fetch sets', async () => {
    const requests = sequence('post', '/things/upload', [() => HttpResponse.json({ id: 't1' }, { status: 202 })]);
    const form = new FormData();
    form.append('file', new Blob(['a,b\n']), 'x.csv');
    await transport().call(fake.uploadThing, { body: form });
    await transport().call(fake.uploadThing, { body: { file: new Blob(['a,b\n']), note: 'hi' } });
    for (const request of requests) {
      expect(request.headers.get('content-type')).toMatch(/^multipart\/form-data; boundary=/);
    }
    const forms = await Promise.all(requests.map((r) => r.formData()));
    const files = await Promise.all(forms.map((f) => (f.get('file') as Blob).text()));
    expect(files).toEqual(['a,b\n', 'a,b\n']);
    expect(forms[1]?.get('note')).toBe('hi');
  });

  it('refuses dot segments as path parameters', async () => {
    await expect(transport().call(fake.getThing, { params: { id: '..' }, query: {} })).rejects.toThrow(TypeError);
  });
});

function rateLimited() {
  return HttpResponse.json(
    { success: false, error: { code: 'RATE_LIMIT_EXCEEDED', message: 'Slow down', statusCode: 429, requestId } },
    { status: 429, headers: { 'Retry-After': '1' } },
  );
}
