import type { IncomingMessage } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject, type TestProject } from '../../../test/accounts.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import type { TrackEvent } from './track.js';
import { bareTrackRoute } from './track-route.js';

let pigeon: TestPigeon;
let project: TestProject;
beforeAll(async () => {
  pigeon = await startTestPigeon();
  ({ project } = await newProject(pigeon));
});
afterAll(() => pigeon?.stop());

/** `/v1/track` with a key is answered before express; the same path with a query string goes through express. */
const BARE = '/v1/track';
const EXPRESS = '/v1/track?via=express';

interface Case {
  name: string;
  body: string | Buffer;
  headers?: Record<string, string>;
  key?: 'public' | 'secret' | 'unknown';
  /** The status both must answer. */
  status: number;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const track = (email: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ email, event: 'signed-up', ...extra });

const CASES: Case[] = [
  { name: 'a valid track, public key', body: track('a@example.com'), status: 200 },
  { name: 'a valid track, secret key', body: track('b@example.com'), key: 'secret', status: 200 },
  { name: 'a gzip body', body: gzipSync(track('c@example.com')), headers: { 'content-encoding': 'gzip' }, status: 200 },
  {
    name: 'a body that is not gzip',
    body: track('d@example.com'),
    headers: { 'content-encoding': 'gzip' },
    status: 400,
  },
  { name: 'malformed JSON', body: '{"email":', status: 400 },
  { name: 'JSON that is not an object', body: '"text"', status: 400 },
  { name: 'a text body', body: 'hello', headers: { 'content-type': 'text/plain' }, status: 415 },
  {
    name: 'a latin1 charset',
    body: track('e@example.com'),
    headers: { 'content-type': 'application/json; charset=latin1' },
    status: 415,
  },
  { name: 'an empty JSON body', body: '', status: 422 },
  { name: 'a body over 1 MB', body: track('f@example.com', { data: { big: 'x'.repeat(1_100_000) } }), status: 413 },
  { name: 'NUL in the data', body: '{"email":"g@example.com","event":"e","data":{"a":"b\\u0000"}}', status: 422 },
  { name: 'no event', body: JSON.stringify({ email: 'h@example.com' }), status: 422 },
  { name: 'a bad email', body: track('not-an-email'), status: 422 },
  { name: 'a reserved event name', body: JSON.stringify({ email: 'i@example.com', event: 'email.sent' }), status: 422 },
  {
    name: 'a malformed Idempotency-Key',
    body: track('j@example.com'),
    headers: { 'idempotency-key': 'k'.repeat(256) },
    status: 422,
  },
  { name: 'a key no project has', body: track('k@example.com'), key: 'unknown', status: 401 },
];

/** What must be the same on both paths: status, type, the rate-limit headers sent, and the body without ids and times. */
async function answer(path: string, c: Case, idempotencyKey?: string) {
  const key = c.key === 'secret' ? project.secretKey : c.key === 'unknown' ? `pk_${'0'.repeat(40)}` : project.publicKey;
  const res = await fetch(`${pigeon.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      ...JSON_TYPE,
      ...c.headers,
      ...(idempotencyKey && { 'idempotency-key': idempotencyKey }),
    },
    body: c.body as BodyInit,
  });
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    rateLimitHeaders: ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'].filter((h) => res.headers.has(h)),
    requestIdEchoed: text.includes(res.headers.get('x-request-id') ?? '-') || res.status === 200,
    body: anonymised(JSON.parse(text)),
  };
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const ISO_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;
const KEY = /parity-\d/g;
const anonymised = (value: unknown) =>
  JSON.parse(JSON.stringify(value).replace(UUID, '<id>').replace(ISO_TIME, '<time>').replace(KEY, '<key>'));

describe('POST /v1/track answered before express', () => {
  it.each(CASES)('answers $name as express does', async (c) => {
    const bare = await answer(BARE, c);
    const viaExpress = await answer(EXPRESS, c);
    expect(bare.status).toBe(c.status);
    expect(bare).toEqual(viaExpress);
  });

  it('answers a reused Idempotency-Key as express does, whichever path claimed it', async () => {
    const c: Case = { name: 'keyed', body: track('keyed@example.com'), status: 200 };
    const firstBare = await answer(BARE, c, 'parity-1');
    const firstExpress = await answer(EXPRESS, c, 'parity-2');
    expect([firstBare.status, firstExpress.status]).toEqual([200, 200]);
    const reusedOnExpress = await answer(EXPRESS, c, 'parity-1');
    const reusedOnBare = await answer(BARE, c, 'parity-2');
    expect(reusedOnBare.status).toBe(409);
    expect(reusedOnBare).toEqual(reusedOnExpress);
  });

  it('takes only POST /v1/track with a well-formed key; everything else is express', () => {
    const route = bareTrackRoute(pigeon.deps, (async () => undefined) as unknown as TrackEvent, '1mb');
    const req = (method: string, url: string, authorization?: string) =>
      ({ method, url, headers: authorization ? { authorization } : {} }) as IncomingMessage;
    expect(route(req('POST', '/v1/track', `Bearer ${project.publicKey}`))?.route).toBe('/v1/track');
    expect(route(req('POST', '/v1/track', `Bearer ${project.secretKey}`))).toBeDefined();
    expect(route(req('POST', '/v1/track'))).toBeUndefined();
    expect(route(req('POST', '/v1/track', 'Bearer xx_nope'))).toBeUndefined();
    expect(route(req('POST', '/v1/track?x=1', `Bearer ${project.publicKey}`))).toBeUndefined();
    expect(route(req('GET', '/v1/track', `Bearer ${project.publicKey}`))).toBeUndefined();
    expect(route(req('POST', '/events/track', `Bearer ${project.publicKey}`))).toBeUndefined();
  });
});
