import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../accounts.js';
import { api } from '../api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../helpers.js';

/**
 * Issue 57, item 1: nobody without a key makes Pigeon read a body. Each request below declares a
 * large body and sends only its first few KB: the answer must come back before the rest is sent
 * (so the server decided on the headers alone), with `Connection: close` (so it does not read and
 * discard the rest either).
 */

let pigeon: TestPigeon;
let auth: Record<string, string>;
let publicKey: string;
beforeAll(async () => {
  pigeon = await startTestPigeon({
    role: 'api',
    env: { RATE_LIMIT_PER_MINUTE: '0', HTTP_LARGE_BODIES: '1', HTTP_LARGE_BODY_WAIT_SECONDS: '1' },
  });
  const created = await newProject(pigeon);
  auth = created.auth;
  publicKey = created.project.publicKey;
});
afterAll(() => pigeon?.stop());

interface PartialAnswer {
  status: number;
  head: string;
  /** Body bytes written before the answer arrived. */
  sent: number;
}

/**
 * Sends the request line and headers, then `firstBytes` of a body declared `declaredBytes` long,
 * and waits (up to 5 s) for an answer without sending more.
 */
function partialRequest(
  path: string,
  headers: Record<string, string>,
  firstBytes: Buffer,
  declaredBytes: number,
): Promise<PartialAnswer> {
  const { port } = new URL(pigeon.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer to ${path} before the body was complete`));
    }, 5000);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({
        status: Number(received.split(' ')[1]),
        head: received.slice(0, end).toLowerCase(),
        sent: firstBytes.length,
      });
    });
    socket.on('error', reject);
    const lines = Object.entries({ ...headers, host: `127.0.0.1:${port}`, 'content-length': String(declaredBytes) })
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n');
    socket.write(`POST ${path} HTTP/1.1\r\n${lines}\r\n\r\n`);
    socket.write(firstBytes);
  });
}

/** A JSON send body of ~`megabytes` MB that gzips to a few dozen KB. */
function gzipBomb(megabytes: number) {
  const body = JSON.stringify({ to: 'a@example.com', subject: 'x', body: 'A'.repeat(megabytes * 1024 * 1024) });
  return gzipSync(body, { level: 9 });
}

describe('bodies are read only after the caller is known', () => {
  const cases: Array<[string, string, Record<string, string>]> = [
    ['POST /v1/send without a key', '/v1/send', {}],
    ['POST /v1/send with an unknown secret key', '/v1/send', { authorization: `Bearer sk_${'0'.repeat(64)}` }],
    ['POST /v1/send/batch without a key', '/v1/send/batch', {}],
    ['POST /contacts without a key', '/contacts', {}],
    ['POST /v1/track with a key no project has', '/v1/track', { authorization: `Bearer pk_${'0'.repeat(64)}` }],
    ['POST /events/track without a key', '/events/track', {}],
  ];
  for (const [name, path, headers] of cases) {
    it(`${name}: 401 before the body is read, and the connection closed`, async () => {
      const bomb = gzipBomb(50);
      const answer = await partialRequest(
        path,
        { 'content-type': 'application/json', 'content-encoding': 'gzip', ...headers },
        bomb.subarray(0, 4096),
        bomb.length,
      );
      expect(answer.status).toBe(401);
      expect(answer.head).toContain('connection: close');
    });
  }

  it('POST /v1/send/batch with a public key is refused the same way', async () => {
    const answer = await partialRequest(
      '/v1/send/batch',
      { 'content-type': 'application/json', authorization: `Bearer ${publicKey}` },
      Buffer.from('{"messages":['),
      40 * 1024 * 1024,
    );
    expect(answer.status).toBe(401);
  });

  it('a CSV import without a key is refused before its multipart body is parsed', async () => {
    const boundary = 'pigeon-boundary';
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\nemail\r\n`,
    );
    const answer = await partialRequest(
      '/contacts/import',
      { 'content-type': `multipart/form-data; boundary=${boundary}` },
      head,
      5 * 1024 * 1024,
    );
    expect(answer.status).toBe(401);
  });

  it('a sign-in form is read up to 64 KB only', async () => {
    const res = await api(pigeon).auth.login({
      body: { email: 'a@example.com', password: 'x'.repeat(70 * 1024) },
    });
    expectEnvelope(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('a gzip body is limited by its inflated size: 413 for an authenticated sender', async () => {
    const bomb = gzipBomb(60);
    const res = await fetch(`${pigeon.url}/v1/send`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: bomb,
    });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('large bodies are read a few at a time: one more waits for a slot, then gets 503 with Retry-After', async () => {
    // HTTP_LARGE_BODIES=1: a slow 10 MB upload holds the only slot.
    const holder = partialRequest(
      '/v1/send',
      { 'content-type': 'application/json', ...auth },
      Buffer.from('{"to":"a@example.com","subject":"x","body":"'),
      10 * 1024 * 1024,
    ).catch((err: Error) => err);
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    const res = await fetch(`${pigeon.url}/v1/send`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ to: 'b@example.com', subject: 'x', body: '<p>x</p>' })),
    });
    const error = expectEnvelope(
      { status: res.status, headers: res.headers, body: await res.json() },
      503,
      'SERVER_BUSY',
    );
    expect(error.suggestion).toMatch(/Retry/);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900); // it waited for the slot first
    // A small uncompressed send does not need a slot: it is not held up by the large one.
    const small = await api(pigeon, auth).emails.send({
      body: { to: 'c@example.com', subject: 'x', body: '<p>x</p>' },
    });
    expect(small.status).not.toBe(503);
    expect(await holder).toBeInstanceOf(Error); // the held upload never got an answer: it was still being read
  });
});
