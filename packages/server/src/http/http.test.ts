import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { initContract } from '@ts-rest/core';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { newProject } from '../../test/accounts.js';
import { api } from '../../test/api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../test/helpers.js';
import { queryRows, sql } from '../db/query.js';
import { MAX_INPUT_DEPTH, requestValidationErrorHandler } from '../kit/validation.js';
import { contractMiddleware } from './contract-middleware.js';

// A tiny contract mounted next to the real one, to drive validation and failures through
// the real middleware chain and error handler.
const c = initContract();
const probe = c.router({
  echo: {
    method: 'POST',
    path: '/__probe/echo/:id',
    metadata: { auth: 'none' },
    pathParams: z.object({ id: z.string().uuid() }),
    query: z.object({ limit: z.coerce.number().int().max(10).optional() }),
    body: z.object({ email: z.string().email(), count: z.number().int() }),
    responses: { 200: z.object({ ok: z.boolean() }) },
  },
  bare: {
    method: 'POST',
    path: '/__probe/bare',
    metadata: { auth: 'none', errorStyle: 'bare' },
    body: z.object({ email: z.string() }),
    responses: { 200: z.object({ ok: z.boolean() }) },
  },
  boom: {
    method: 'GET',
    path: '/__probe/boom',
    metadata: { auth: 'none' },
    responses: { 200: z.object({ ok: z.boolean() }) },
  },
});

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon({
    mountExtraRoutes: (app, deps) => {
      const s = initServer();
      createExpressEndpoints(
        probe,
        s.router(probe, {
          echo: async () => ({ status: 200, body: { ok: true } }),
          bare: async () => ({ status: 200, body: { ok: true } }),
          boom: async () => {
            throw new Error('secret internal detail: password=hunter2');
          },
        }),
        app,
        { globalMiddleware: contractMiddleware(deps), requestValidationErrorHandler },
      );
    },
  });
});
afterAll(() => pigeon?.stop());

// Almost every request here is wrong on purpose (raw or malformed bodies, NUL and bad percent-encoding
// in paths, foreign Content-Encoding, test-only /__probe routes, the OpenAPI and docs pages outside the
// contract), so they stay on `pigeon.request`; the valid ones go through the typed client.
describe('error envelope', () => {
  it('answers malformed JSON with 400 MALFORMED_JSON', async () => {
    // untyped: raw body (malformed JSON)
    const res = await pigeon.request('POST', '/__probe/echo/x', {
      rawBody: '{"email": ',
      headers: { 'content-type': 'application/json' },
    });
    const error = expectEnvelope(res, 400, 'MALFORMED_JSON');
    expect(error.suggestion).toMatch(/JSON/);
  });

  it('answers an unknown route with 404 NOT_FOUND', async () => {
    // untyped: outside the contract (an unknown route)
    const res = await pigeon.request('GET', '/no/such/route');
    const error = expectEnvelope(res, 404, 'NOT_FOUND');
    expect(error.message).toContain('/no/such/route');
  });

  it('answers schema failures with 422 VALIDATION_ERROR and field-level errors', async () => {
    // untyped: outside the contract (a test-only probe route)
    const res = await pigeon.request('POST', '/__probe/echo/not-a-uuid?limit=50', {
      body: { email: 'nope', count: 'three' },
    });
    const error = expectEnvelope(res, 422, 'VALIDATION_ERROR');
    const byField = Object.fromEntries((error.errors ?? []).map((e) => [e.field, e]));
    expect(Object.keys(byField).sort()).toEqual(['count', 'email', 'id', 'limit']);
    expect(byField.email).toMatchObject({ code: 'invalid_string', message: expect.any(String) });
    expect(byField.count).toMatchObject({ code: 'invalid_type', received: 'string' });
    expect(byField.limit).toMatchObject({ code: 'too_big' });
    expect(res.text).not.toContain('ZodError');
  });

  it('gives the bare { error } 400 body on routes that ask for it', async () => {
    // untyped: outside the contract (a test-only probe route)
    const res = await pigeon.request('POST', '/__probe/bare', { body: {} });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: expect.stringContaining('email') });
  });

  it('hides internals of an unexpected exception behind a 500 envelope', async () => {
    // untyped: outside the contract (a test-only probe route)
    const res = await pigeon.request('GET', '/__probe/boom');
    const error = expectEnvelope(res, 500, 'INTERNAL_SERVER_ERROR');
    expect(res.text).not.toContain('hunter2');
    expect(res.text).not.toContain('secret internal detail');
    expect(error.suggestion).toContain(res.headers.get('x-request-id'));
  });

  it('refuses bodies over the default limit with 413', async () => {
    // untyped: outside the contract (a test-only probe route)
    const res = await pigeon.request('POST', '/__probe/bare', { body: { email: 'x'.repeat(1_100_000) } });
    expectEnvelope(res, 413, 'PAYLOAD_TOO_LARGE');
  });
});

describe('text and shapes that used to reach the database (500) are refused once, for every route', () => {
  const json = (auth: Record<string, string>) => ({ ...auth, 'content-type': 'application/json' });
  const countContacts = async (projectId: string) =>
    (
      await queryRows(pigeon.deps.db.pool, sql`SELECT count(*)::int AS n FROM contacts WHERE project_id = ${projectId}`)
    )[0]?.n;

  it('refuses NUL characters and lone surrogates in body values and keys with 422 naming the field', async () => {
    const { project, auth } = await newProject(pigeon);
    const pk = { authorization: `Bearer ${project.publicKey}` };
    const cases: Array<[string, string]> = [
      ['{"email":"a@example.com","event":"e","data":{"plan":"pro\\u0000"}}', 'data.plan'],
      ['{"email":"a@example.com","event":"e","data":{"note":"\\ud800"}}', 'data.note'],
      ['{"email":"a@example.com","event":"e","data":{"x":["ok","\\udc00 trailing"]}}', 'data.x.1'],
      ['{"email":"a@example.com","event":"e","data":{"k\\u0000ey":1}}', 'data.k\\u0000ey'],
    ];
    for (const [rawBody, field] of cases) {
      // untyped: raw body (escapes JSON.stringify never writes)
      const res = await pigeon.request('POST', '/v1/track', { headers: json(pk), rawBody });
      const error = expectEnvelope(res, 422, 'VALIDATION_ERROR');
      expect(error.errors).toContainEqual(expect.objectContaining({ field, code: 'invalid_string' }));
    }
    // A valid surrogate pair (an emoji) is text like any other.
    // untyped: raw body (escapes JSON.stringify never writes)
    const emoji = await pigeon.request('POST', '/v1/track', {
      headers: json(pk),
      rawBody: '{"email":"a@example.com","event":"e","data":{"mood":"\\ud83d\\ude00"}}',
    });
    expect(emoji.status).toBe(200);
    const send = await api(pigeon, auth).emails.send({
      body: { to: 'b@example.com', subject: 'Hi\u0000', body: 'x', from: 'a@example.com' },
    });
    expect(expectEnvelope(send, 422, 'VALIDATION_ERROR').errors?.[0]?.field).toBe('subject');
    expect(await countContacts(project.id)).toBe(1); // only the emoji's contact
  });

  it('refuses NUL in the query and in path parameters with 422, and bad percent-encoding with 400', async () => {
    const { auth } = await newProject(pigeon);
    const search = expectEnvelope(
      await api(pigeon, auth).contacts.list({ query: { search: 'a\u0000b' } }),
      422,
      'VALIDATION_ERROR',
    );
    expect(search.errors?.[0]).toMatchObject({ field: 'search', code: 'invalid_string' });
    for (const path of ['/events/a%00b', '/contacts/fields/a%00b/values']) {
      // untyped: the HTTP layer (a NUL percent-encoded in the path)
      const res = await pigeon.request(path.startsWith('/events') ? 'DELETE' : 'GET', path, { headers: auth });
      expectEnvelope(res, 422, 'VALIDATION_ERROR');
    }
    // untyped: the HTTP layer (bad percent-encoding in the path)
    const malformed = await pigeon.request('GET', '/contacts/%E0%A4%A', { headers: auth });
    expect(expectEnvelope(malformed, 400, 'BAD_REQUEST').message).toMatch(/percent-encod/);
  });

  it('answers a body that is not what its Content-Encoding says with 400, and accepts a real one', async () => {
    const { project, auth } = await newProject(pigeon);
    for (const encoding of ['gzip', 'deflate', 'br']) {
      // untyped: the HTTP layer (a body that is not its Content-Encoding)
      const res = await pigeon.request('POST', '/contacts', {
        headers: { ...json(auth), 'content-encoding': encoding },
        rawBody: '{"email":"plain@example.com"}',
      });
      expect(expectEnvelope(res, 400, 'BAD_REQUEST').message).toContain(encoding);
    }
    expect(await countContacts(project.id)).toBe(0);
    const res = await fetch(`${pigeon.url}/contacts`, {
      method: 'POST',
      headers: { ...json(auth), 'content-encoding': 'gzip' },
      body: gzipSync('{"email":"zipped@example.com"}'),
    });
    expect(res.status).toBe(201);
  });

  it('refuses JSON nested deeper than the limit with a field error, however deep', async () => {
    const { project } = await newProject(pigeon);
    const pk = { authorization: `Bearer ${project.publicKey}` };
    for (const depth of [MAX_INPUT_DEPTH + 1, 5_000, 200_000]) {
      const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      // untyped: raw body (JSON nested past the parser limit)
      const res = await pigeon.request('POST', '/v1/track', {
        headers: json(pk),
        rawBody: `{"email":"deep@example.com","event":"e","data":{"x":${nested}}}`,
      });
      const error = expectEnvelope(res, 422, 'VALIDATION_ERROR');
      expect(error.errors?.[0]).toMatchObject({ code: 'too_big', field: expect.stringMatching(/^data\.x\.0/) });
    }
    const fine = `${'{"a":'.repeat(20)}1${'}'.repeat(20)}`;
    // untyped: raw body (JSON nested past the parser limit)
    const ok = await pigeon.request('POST', '/v1/track', {
      headers: json(pk),
      rawBody: `{"email":"deep@example.com","event":"e","data":{"x":${fine}}}`,
    });
    expect(ok.status).toBe(200);
    expect(await countContacts(project.id)).toBe(1);
  });
});

describe('request id', () => {
  it('echoes a caller-supplied uuid', async () => {
    const id = '3f1c1e0e-8d7a-4a53-9b7e-0c0f2d7f9a11';
    // untyped: outside the contract (an unknown route)
    const res = await pigeon.request('GET', '/nope', { headers: { 'x-request-id': id } });
    expect(res.headers.get('x-request-id')).toBe(id);
    expect(res.body.error.requestId).toBe(id);
  });

  it('replaces a non-uuid request id with a fresh uuid', async () => {
    const res = await api(pigeon, { 'x-request-id': 'not-a-uuid; <script>' }).system.health();
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('keep-alive connections', () => {
  it('keeps an idle connection open past the 5 s Node closes at, and says so (a balancer idles 60 s)', async () => {
    const { hostname, port } = new URL(pigeon.url);
    const socket = connect(Number(port), hostname);
    let received = '';
    let closed = false;
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('close', () => {
      closed = true;
    });
    const answers = () => received.split('HTTP/1.1 200').length - 1;
    const ask = async (n: number) => {
      socket.write(`GET /health HTTP/1.1\r\nHost: ${hostname}\r\nConnection: keep-alive\r\n\r\n`);
      await expect.poll(answers, { timeout: 5_000 }).toBe(n);
    };
    try {
      await ask(1);
      expect(received).toMatch(/^keep-alive: timeout=72\r$/im);
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      expect(closed).toBe(false);
      await ask(2);
    } finally {
      socket.destroy();
    }
  }, 20_000);
});

describe('system routes', () => {
  it('reports health with the database up', async () => {
    const res = await api(pigeon).system.health();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', database: 'up', version: expect.any(String) });
  });

  it('serves the OpenAPI document and the API reference page', async () => {
    // untyped: outside the contract (the OpenAPI document)
    const doc = await pigeon.request('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    expect(doc.body.paths['/health'].get.operationId).toBe('system.health');
    // untyped: outside the contract (the OpenAPI document)
    const doc30 = await pigeon.request('GET', '/openapi-3.0.json');
    expect(doc30.body.openapi).toBe('3.0.3');
    expect(Object.keys(doc30.body.paths)).toEqual(Object.keys(doc.body.paths));
    expect(doc30.body.servers).toEqual(doc.body.servers);
    // Every route parses a JSON body, so even /health can answer 400 (declared in the document).
    const malformed = await new Promise<number | undefined>((resolve, reject) => {
      const req = httpRequest(`${pigeon.url}/health`, {
        method: 'GET',
        headers: { 'content-type': 'application/json' },
      });
      req.on('response', (res) => resolve(res.resume().statusCode)).on('error', reject);
      req.end('{'); // fetch refuses a GET with a body; node:http sends one
    });
    expect(malformed).toBe(400);
    expect(doc.body.paths['/health'].get.responses['400']).toBeDefined();
    // untyped: outside the contract (the API reference page)
    const page = await pigeon.request('GET', '/docs/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('swagger-ui-bundle.js');
    const asset = await fetch(`${pigeon.url}/docs/assets/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
  });
});
