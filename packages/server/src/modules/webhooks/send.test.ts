import type { Resolver } from 'node:dns/promises';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../../test/dns-server.js';
import { TEST_TLS_CERT } from '../../../test/tls-fixture.js';
import { type Received, startTarget, type Target } from '../../../test/webhook-targets.js';
import { CachingResolver } from '../../kit/caching-resolver.js';
import { createResolver } from '../domains/dns-check.js';
import { forbiddenReason } from './guard.js';
import { sendWebhook, WEBHOOK_DNS, type WebhookRequest } from './send.js';
import { generateWebhookSecret, newWebhookId } from './sign.js';

let dns: TestDnsServer;
let resolver: Resolver;
const targets: Target[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = createResolver([dns.address]);
});
afterAll(() => dns?.close());
afterEach(async () => {
  await Promise.all(targets.splice(0).map((t) => t.close()));
});

async function target(...args: Parameters<typeof startTarget>): Promise<Target> {
  const t = await startTarget(...args);
  targets.push(t);
  return t;
}

const secret = generateWebhookSecret();

/** The real policy, except for exactly these loopback ports (our test receivers). */
const allowPorts =
  (...allowed: Target[]) =>
  (address: string, port: number) =>
    address === '127.0.0.1' && allowed.some((t) => t.port === port) ? null : forbiddenReason(address);

const send = (req: Partial<WebhookRequest> & { url: string }) =>
  sendWebhook({
    webhookId: newWebhookId(),
    secrets: [secret],
    allowPrivateNetworks: false,
    resolver,
    body: { event: 'contact.created', n: 1 },
    ...req,
  });

/** The standard's own verifier: throws unless a signature matches; returns the parsed JSON body. */
function verify(received: Received, withSecret = secret, jsonParse = true) {
  const headers = {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  };
  return new Webhook(withSecret).verify(received.body, headers, { jsonParse });
}

describe('targets are vetted before any connection', () => {
  it('refuses literal private and loopback addresses', async () => {
    const t = await target();
    for (const url of [`${t.origin}/hook`, `http://[::ffff:127.0.0.1]:${t.port}/hook`, 'http://10.0.0.5/hook']) {
      const result = await send({ url });
      expect(result).toMatchObject({ outcome: 'permanent', statusCode: null, responseBody: null });
      expect(result.error).toMatch(/^refused: .* (loopback|IPv4-mapped|private)/);
      expect(result.durationMs).toBeLessThan(1000);
    }
    expect(t.received).toEqual([]);
  });

  it('refuses names that resolve to loopback, private or mixed addresses', async () => {
    const t = await target();
    dns.setAddresses('loop.test', '127.0.0.1');
    dns.setAddresses('internal.test', '10.0.0.5');
    dns.setAddresses('mixed.test', '93.184.215.14', '10.0.0.5');
    dns.setAddresses('v6.test', '::ffff:10.0.0.1');
    const cases: Array<[string, RegExp]> = [
      [`http://loop.test:${t.port}/`, /127\.0\.0\.1 is a loopback address \(loop\.test resolves to 127\.0\.0\.1\)/],
      [`http://internal.test:${t.port}/`, /10\.0\.0\.5 is a private address/],
      [`http://mixed.test:${t.port}/`, /10\.0\.0\.5 is a private address/],
      [`http://v6.test:${t.port}/`, /IPv4-mapped/],
      [`http://localhost:${t.port}/`, /loopback/],
      [`http://app.localhost:${t.port}/`, /loopback/],
      // Fully qualified (trailing-dot) forms name the same hosts.
      [`http://localhost.:${t.port}/`, /loopback/],
      [`http://app.localhost..:${t.port}/`, /loopback/],
      [`http://LOCALHOST.:${t.port}/`, /loopback/],
      [`http://loop.test.:${t.port}/`, /127\.0\.0\.1 is a loopback address/],
    ];
    for (const [url, reason] of cases) {
      const result = await send({ url });
      expect(result.outcome, url).toBe('permanent');
      expect(result.error, url).toMatch(reason);
    }
    expect(t.received).toEqual([]);
  });

  it('refuses URLs that are not http(s), carry credentials or do not parse', async () => {
    for (const [url, reason] of [
      ['ftp://example.com/hook', /not an http\(s\) URL/],
      ['http://user:pass@example.com/hook', /credentials/],
      ['not a url', /not a valid URL/],
    ] as const) {
      const result = await send({ url });
      expect(result).toMatchObject({ outcome: 'permanent', statusCode: null });
      expect(result.error).toMatch(reason);
    }
  });

  it('counts a name that does not resolve as retryable', async () => {
    const result = await send({ url: 'http://nowhere.test/hook' });
    expect(result.outcome).toBe('retryable');
    expect(result.error).toMatch(/could not resolve nowhere\.test/);
  });

  it('delivers to private addresses when WEBHOOK_ALLOW_PRIVATE_NETWORKS is on, connecting to the vetted address', async () => {
    const t = await target();
    // pinned.test exists only in the test DNS server: had the connection looked the name up again
    // (system resolver), it would have failed.
    dns.setAddresses('pinned.test', '127.0.0.1');
    const literal = await send({ url: `${t.origin}/a`, allowPrivateNetworks: true });
    const named = await send({ url: `http://pinned.test:${t.port}/b?x=1`, allowPrivateNetworks: true });
    expect(literal).toMatchObject({ outcome: 'success', statusCode: 200, responseBody: 'ok', error: null });
    expect(named).toMatchObject({ outcome: 'success', statusCode: 200, url: `http://pinned.test:${t.port}/b?x=1` });
    expect(t.received.map((r) => [r.path, r.headers.host])).toEqual([
      ['/a', `127.0.0.1:${t.port}`],
      ['/b?x=1', `pinned.test:${t.port}`],
    ]);
  });
});

describe('signing', () => {
  it('signs the Standard Webhooks way, verifiable with the standardwebhooks package', async () => {
    const t = await target();
    const webhookId = newWebhookId();
    const result = await send({ url: `${t.origin}/hook`, webhookId, isForbidden: allowPorts(t) });
    expect(result.outcome).toBe('success');
    const [received] = t.received;
    if (!received) throw new Error('nothing received');
    expect(received.method).toBe('POST');
    expect(received.headers['webhook-id']).toBe(webhookId);
    expect(webhookId).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(Math.abs(Number(received.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
    expect(received.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.headers['user-agent']).toBe('Pigeon-Webhooks/1');
    expect(verify(received)).toEqual({ event: 'contact.created', n: 1 });
    expect(() => verify(received, generateWebhookSecret())).toThrow(/No matching signature/);
    expect(() => verify({ ...received, body: '{"event":"contact.deleted","n":1}' })).toThrow(/No matching signature/);
  });

  it('keeps the webhook-id across attempts and takes the timestamp from the clock given', async () => {
    const t = await target();
    const webhookId = newWebhookId();
    const at = new Date(Date.now() - 60_000);
    await send({ url: t.origin, webhookId, isForbidden: allowPorts(t), now: () => at });
    await send({ url: t.origin, webhookId, isForbidden: allowPorts(t) });
    expect(t.received.map((r) => r.headers['webhook-id'])).toEqual([webhookId, webhookId]);
    expect(t.received[0]?.headers['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)));
    for (const r of t.received) expect(verify(r)).toEqual({ event: 'contact.created', n: 1 });
  });

  it('signs with every secret given, each signature verifiable on its own', async () => {
    const t = await target();
    const previous = generateWebhookSecret();
    await send({ url: t.origin, secrets: [secret, previous], isForbidden: allowPorts(t) });
    const [received] = t.received;
    if (!received) throw new Error('nothing received');
    expect(String(received.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(received, secret)).toEqual({ event: 'contact.created', n: 1 });
    expect(verify(received, previous)).toEqual({ event: 'contact.created', n: 1 });
  });

  it('lets callers set method, headers and body but not the webhook headers, Host or Content-Length', async () => {
    const t = await target();
    const result = await send({
      url: `${t.origin}/put`,
      method: 'PUT',
      body: 'plain words',
      isForbidden: allowPorts(t),
      headers: {
        'X-Custom': 'yes',
        'Webhook-Id': 'msg_forged',
        'webhook-signature': 'v1,forged',
        Host: 'evil.example',
        'Content-Length': '1',
        'User-Agent': 'Acme/2',
      },
    });
    expect(result.outcome).toBe('success');
    const [received] = t.received;
    if (!received) throw new Error('nothing received');
    expect(received).toMatchObject({ method: 'PUT', body: 'plain words' });
    expect(received.headers).toMatchObject({
      'x-custom': 'yes',
      host: `127.0.0.1:${t.port}`,
      'content-length': '11',
      'content-type': 'text/plain; charset=utf-8',
      'user-agent': 'Acme/2',
    });
    expect(received.headers['webhook-id']).not.toBe('msg_forged');
    expect(verify(received, secret, false)).toBeUndefined();
    expect(() => verify({ ...received, body: 'plain wordz' }, secret, false)).toThrow(/No matching signature/);
  });

  it('refuses header names and values that could split the request', async () => {
    const t = await target();
    const bad = await send({ url: t.origin, isForbidden: allowPorts(t), headers: { 'x-a': 'one\r\nx-b: two' } });
    expect(bad).toMatchObject({ outcome: 'permanent', error: 'invalid value of header x-a' });
    expect(t.received).toEqual([]);
  });
});

describe('outcomes', () => {
  it('5xx and 429 are retryable, with status, body excerpt and Retry-After', async () => {
    const t = await target((req, res) => {
      res.statusCode = req.path === '/busy' ? 429 : 503;
      res.setHeader('retry-after', '120');
      res.end('try later');
    });
    const down = await send({ url: `${t.origin}/down`, isForbidden: allowPorts(t) });
    expect(down).toMatchObject({
      outcome: 'retryable',
      statusCode: 503,
      responseBody: 'try later',
      error: 'HTTP 503 Service Unavailable',
      retryAfterMs: 120_000,
    });
    const busy = await send({ url: `${t.origin}/busy`, isForbidden: allowPorts(t) });
    expect(busy).toMatchObject({ outcome: 'retryable', statusCode: 429 });
  });

  it('other 4xx are permanent', async () => {
    const t = await target((_req, res) => {
      res.statusCode = 404;
      res.end('no such hook');
    });
    const result = await send({ url: t.origin, isForbidden: allowPorts(t) });
    expect(result).toMatchObject({
      outcome: 'permanent',
      statusCode: 404,
      responseBody: 'no such hook',
      error: 'HTTP 404 Not Found',
      retryAfterMs: null,
    });
  });

  it('a receiver that does not answer is retryable after about the timeout', async () => {
    const t = await target(() => {}); // never responds
    const result = await send({ url: t.origin, timeoutMs: 300, isForbidden: allowPorts(t) });
    expect(result).toMatchObject({ outcome: 'retryable', statusCode: null, error: 'timed out after 300 ms' });
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
    expect(result.durationMs).toBeLessThan(1500);
    expect(t.received).toHaveLength(1);
  });

  it('a refused connection is retryable', async () => {
    const t = await target();
    const { port } = t;
    await targets.splice(0)[0]?.close();
    const result = await send({ url: `http://127.0.0.1:${port}/`, allowPrivateNetworks: true });
    expect(result).toMatchObject({ outcome: 'retryable', statusCode: null });
    expect(result.error).toMatch(/ECONNREFUSED/);
  });

  it('keeps at most 1 KB of the response body, in whole characters', async () => {
    const t = await target((_req, res) => res.end(`${'a'.repeat(1023)}é${'b'.repeat(10_000)}`));
    const result = await send({ url: t.origin, isForbidden: allowPorts(t) });
    expect(result.outcome).toBe('success');
    expect(result.responseBody).toBe('a'.repeat(1023));
  });
});

describe('connections', () => {
  it('keeps connections alive per vetted address: a request for another name reuses one, after its own vetting', async () => {
    const t = await target();
    dns.setAddresses('reuse.test', '127.0.0.1');
    const first = await send({ url: `${t.origin}/one`, isForbidden: allowPorts(t) });
    const second = await send({ url: `${t.origin}/two`, isForbidden: allowPorts(t) });
    const named = await send({ url: `http://reuse.test:${t.port}/three`, isForbidden: allowPorts(t) });
    dns.setAddresses('reuse.test', '10.0.0.9');
    const moved = await send({ url: `http://reuse.test:${t.port}/four`, isForbidden: allowPorts(t) });
    expect([first, second, named].map((r) => r.outcome)).toEqual(['success', 'success', 'success']);
    expect(moved).toMatchObject({ outcome: 'permanent', statusCode: null });
    expect(t.received.map((r) => r.path)).toEqual(['/one', '/two', '/three']);
    // The third request (another name, the same vetted address) goes over a connection already open.
    const [one, two, three] = t.received.map((r) => r.remotePort);
    expect([one, two]).toContain(three);
  });
});

describe("DNS through the senders' cache", () => {
  it('asks once per TTL for a burst, vets the cached answer on every attempt, and names a failed lookup', async () => {
    const t = await target();
    const cached = new CachingResolver({ servers: [dns.address], ...WEBHOOK_DNS });
    dns.setTtl(60);
    dns.setAddresses('burst.test', '127.0.0.1');
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        send({ url: `http://burst.test:${t.port}/${i}`, resolver: cached, isForbidden: allowPorts(t) }),
      ),
    );
    expect(results.every((r) => r.outcome === 'success')).toBe(true);
    expect([dns.questions('burst.test', 'A'), dns.questions('burst.test', 'AAAA')]).toEqual([1, 1]);
    // The same cached answer, vetted again: refused under the real policy.
    const refused = await send({ url: `http://burst.test:${t.port}/again`, resolver: cached });
    expect(refused).toMatchObject({ outcome: 'permanent', statusCode: null });
    expect(refused.error).toMatch(/refused: 127\.0\.0\.1 is a loopback address \(burst\.test resolves/);
    expect(dns.questions('burst.test', 'A')).toBe(1);
    dns.setTtl(1);
    dns.setNxDomain('nowhere-cached.test');
    const missing = await send({ url: `http://nowhere-cached.test:${t.port}/`, resolver: cached });
    expect(missing).toMatchObject({ outcome: 'retryable', error: 'could not resolve nowhere-cached.test (ENOTFOUND)' });
  });
});

describe('redirects', () => {
  it('refuses a redirect from an allowed target to a private one', async () => {
    const inside = await target();
    dns.setAddresses('internal-redirect.test', '10.0.0.5');
    const outside = await target((req, res) => {
      res.statusCode = 307;
      res.setHeader(
        'location',
        req.path === '/to-name' ? 'http://internal-redirect.test/' : `http://127.0.0.1:${inside.port}/secret`,
      );
      res.end();
    });
    const direct = await send({ url: `${outside.origin}/to-ip`, isForbidden: allowPorts(outside) });
    expect(direct).toMatchObject({ outcome: 'permanent', statusCode: null, url: `${inside.origin}/secret` });
    expect(direct.error).toMatch(/refused: 127\.0\.0\.1 is a loopback address/);
    const viaName = await send({ url: `${outside.origin}/to-name`, isForbidden: allowPorts(outside) });
    expect(viaName.outcome).toBe('permanent');
    expect(viaName.error).toMatch(/10\.0\.0\.5 is a private address \(internal-redirect\.test resolves/);
    expect(outside.received).toHaveLength(2);
    expect(inside.received).toEqual([]);
  });

  it('follows allowed redirects: 307 repeats the signed POST, 303 continues as a signed GET without body', async () => {
    const final = await target();
    const hops = await target((req, res) => {
      res.statusCode = req.path === '/see-other' ? 303 : 307;
      res.setHeader('location', req.path === '/see-other' ? `${final.origin}/got` : '/see-other');
      res.end();
    });
    const result = await send({
      url: `${hops.origin}/start`,
      headers: { authorization: 'Bearer for-hops-only', 'x-keep': '1' },
      isForbidden: allowPorts(hops, final),
    });
    expect(result).toMatchObject({ outcome: 'success', statusCode: 200, url: `${final.origin}/got` });
    expect(hops.received.map((r) => [r.method, r.path, r.body])).toEqual([
      ['POST', '/start', '{"event":"contact.created","n":1}'],
      ['POST', '/see-other', '{"event":"contact.created","n":1}'],
    ]);
    for (const r of hops.received) expect(verify(r)).toEqual({ event: 'contact.created', n: 1 });
    const [got] = final.received;
    if (!got) throw new Error('the final hop got nothing');
    expect(got).toMatchObject({ method: 'GET', path: '/got', body: '' });
    expect(verify(got)).toBeUndefined(); // the signature covers the empty body actually sent
    expect(got.headers['content-type']).toBeUndefined();
    expect(got.headers.authorization).toBeUndefined(); // another origin (port)
    expect(got.headers['x-keep']).toBe('1');
    expect(hops.received[1]?.headers.authorization).toBe('Bearer for-hops-only');
  });

  it('gives up after 5 redirects', async () => {
    const loop = await target((req, res) => {
      res.statusCode = 302;
      res.setHeader('location', `/n${Number(req.path.slice(2) || 0) + 1}`);
      res.end();
    });
    const result = await send({ url: `${loop.origin}/n0`, method: 'PUT', isForbidden: allowPorts(loop) });
    expect(result).toMatchObject({ outcome: 'permanent', error: 'more than 5 redirects' });
    expect(loop.received.map((r) => `${r.method} ${r.path}`)).toEqual([
      'PUT /n0',
      'PUT /n1',
      'PUT /n2',
      'PUT /n3',
      'PUT /n4',
      'PUT /n5',
    ]);
  });
});

describe('https', () => {
  it('connects to the pinned address with the hostname as TLS server name, and checks the certificate', async () => {
    const t = await target(undefined, { tls: true });
    dns.setAddresses('hook.test', '127.0.0.1');
    dns.setAddresses('other.test', '127.0.0.1');
    const ok = await send({ url: `https://hook.test:${t.port}/tls`, isForbidden: allowPorts(t), ca: TEST_TLS_CERT });
    expect(ok).toMatchObject({ outcome: 'success', statusCode: 200 });
    expect(t.received[0]).toMatchObject({ servername: 'hook.test', path: '/tls' });
    expect(t.received[0]?.headers.host).toBe(`hook.test:${t.port}`);
    const wrongName = await send({
      url: `https://other.test:${t.port}/tls`,
      isForbidden: allowPorts(t),
      ca: TEST_TLS_CERT,
    });
    expect(wrongName.outcome).toBe('retryable');
    expect(wrongName.error).toMatch(/other\.test.*altnames|altnames.*other\.test/i);
    const untrusted = await send({ url: `https://hook.test:${t.port}/tls`, isForbidden: allowPorts(t) });
    expect(untrusted.outcome).toBe('retryable');
    expect(untrusted.error).toMatch(/self.signed/i);
    expect(t.received).toHaveLength(1);
  });
});
