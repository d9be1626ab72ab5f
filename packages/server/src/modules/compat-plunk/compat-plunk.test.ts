import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { startTestPigeon, type TestPigeon, type TestResponse } from '../../../test/helpers.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
}, 60_000);
afterAll(() => pigeon?.stop());

const ISO = /^\d{4}-\d{2}-\d{2}T/;

/** Plunk's error body, exactly: `{ code, error, message, time }`. */
function expectPlunkError(res: TestResponse, status: number, message?: string | RegExp) {
  expect(res.status).toBe(status);
  expect(Object.keys(res.body).sort()).toEqual(['code', 'error', 'message', 'time']);
  expect(res.body.code).toBe(status);
  expect(typeof res.body.error).toBe('string');
  expect(typeof res.body.time).toBe('number');
  if (message) expect(res.body.message).toMatch(message);
}

describe("Plunk's v1 contact routes", () => {
  it('create, read, count, list, update, subscribe, unsubscribe and delete in Plunk’s shapes', async () => {
    const { auth } = await newProject(pigeon);
    const call = (method: string, path: string, body?: unknown) =>
      // untyped: outside the contract (Plunk's compatibility routes)
      pigeon.request(method, path, { headers: auth, body });

    const created = await call('POST', '/v1/contacts', {
      email: 'Ada@Example.com',
      subscribed: true,
      data: { plan: 'pro', name: 'Ada' },
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      success: true,
      id: expect.any(String),
      email: 'ada@example.com',
      subscribed: true,
      data: expect.any(String),
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    expect(JSON.parse(created.body.data)).toEqual({ plan: 'pro', name: 'Ada' });
    const id = created.body.id;

    expectPlunkError(
      await call('POST', '/v1/contacts', { email: 'ada@example.com', subscribed: false }),
      409,
      'Contact already exists',
    );

    const got = await call('GET', `/v1/contacts/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id, email: 'ada@example.com', subscribed: true });
    expect(got.body.success).toBeUndefined();

    await call('POST', '/v1/contacts', { email: 'grace@example.com', subscribed: false });
    expect((await call('GET', '/v1/contacts/count')).body).toEqual({ count: 2 });
    const listed = await call('GET', '/v1/contacts');
    expect(listed.status).toBe(200);
    expect(listed.body.map((c: { email: string }) => c.email)).toEqual(['ada@example.com', 'grace@example.com']);
    expect(listed.body[1].data).toBeNull();

    // Plunk's PUT: a falsy value removes the key, others are set; named by email here.
    const updated = await call('PUT', '/v1/contacts', { email: 'ada@example.com', data: { plan: '', team: 'math' } });
    expect(updated.status).toBe(200);
    expect(updated.body.success).toBe(true);
    expect(JSON.parse(updated.body.data)).toEqual({ name: 'Ada', team: 'math' });
    // Named by id, `email` is the new address.
    const renamed = await call('PUT', '/v1/contacts', { id, email: 'ada@lovelace.example', subscribed: false });
    expect(renamed.body).toMatchObject({ id, email: 'ada@lovelace.example', subscribed: false });

    const subscribed = await call('POST', '/v1/contacts/subscribe', { email: 'ada@lovelace.example' });
    expect(subscribed.status).toBe(200);
    expect(subscribed.body).toEqual({ success: true, contact: id, subscribed: true });
    expect((await call('GET', `/v1/contacts/${id}`)).body.subscribed).toBe(true);
    const unsubscribed = await call('POST', '/v1/contacts/unsubscribe', { id });
    expect(unsubscribed.body).toEqual({ success: true, contact: id, subscribed: false });
    // The native contact saw the same change.
    const native = await api(pigeon, auth).contacts.get({ params: { id } });
    expect(native.body).toMatchObject({ id, subscribed: false, data: { name: 'Ada', team: 'math' } });

    const deleted = await call('DELETE', '/v1/contacts', { id });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ success: true, id, email: 'ada@lovelace.example' });
    expectPlunkError(await call('GET', `/v1/contacts/${id}`), 404, 'That contact was not found');
    expect((await call('GET', '/v1/contacts/count')).body).toEqual({ count: 1 });
  });

  it("another project's contact is a 404 in Plunk's shape, and nothing of it changes", async () => {
    const mine = await newProject(pigeon);
    const theirs = await newProject(pigeon);
    // untyped: outside the contract (Plunk's compatibility routes)
    const theirContact = await pigeon.request('POST', '/v1/contacts', {
      headers: theirs.auth,
      body: { email: 'theirs@example.com', subscribed: true },
    });
    const id = theirContact.body.id;
    const as = (method: string, path: string, body?: unknown) =>
      // untyped: outside the contract (Plunk's compatibility routes)
      pigeon.request(method, path, { headers: mine.auth, body });
    expectPlunkError(await as('GET', `/v1/contacts/${id}`), 404);
    expectPlunkError(await as('POST', '/v1/contacts/unsubscribe', { id }), 404);
    expectPlunkError(await as('POST', '/v1/contacts/unsubscribe', { email: 'theirs@example.com' }), 404);
    expectPlunkError(await as('PUT', '/v1/contacts', { id, subscribed: false }), 404);
    expectPlunkError(await as('DELETE', '/v1/contacts', { id }), 404);
    // untyped: outside the contract (Plunk's compatibility routes)
    const still = await pigeon.request('GET', `/v1/contacts/${id}`, { headers: theirs.auth });
    expect(still.body).toMatchObject({ id, subscribed: true });
  });

  it('bad input is refused in Plunk’s shape and changes nothing', async () => {
    const { auth } = await newProject(pigeon);
    const call = (method: string, path: string, body?: unknown) =>
      // untyped: outside the contract (Plunk's compatibility routes)
      pigeon.request(method, path, { headers: auth, body });
    const first = await call('POST', '/v1/contacts', { email: 'kept@example.com', subscribed: true, data: { a: 1 } });

    expectPlunkError(
      await call('POST', '/v1/contacts', { email: 'new@example.com', subscribed: true, list: 'x' }),
      422,
      /list/,
    );
    expectPlunkError(
      await call('POST', '/v1/contacts', { email: 'new@example.com', subscribed: 'yes' }),
      422,
      /subscribed/,
    );
    expectPlunkError(await call('POST', '/v1/contacts', { email: 'not-an-address', subscribed: true }), 422, /email/);
    expectPlunkError(await call('PUT', '/v1/contacts', { subscribed: false }), 422, /id.*email/);
    expectPlunkError(
      await call('PUT', '/v1/contacts', { id: first.body.id, subscribed: false, tags: ['x'] }),
      422,
      /tags/,
    );
    expectPlunkError(await call('POST', '/v1/contacts/subscribe', { id: 'not-a-uuid' }), 422, /id/);
    expectPlunkError(await call('DELETE', '/v1/contacts', {}), 422, /id/);
    expectPlunkError(await call('GET', '/v1/contacts/not-a-uuid'), 422);

    expect((await call('GET', '/v1/contacts/count')).body).toEqual({ count: 1 });
    expect((await call('GET', `/v1/contacts/${first.body.id}`)).body).toMatchObject({
      subscribed: true,
      data: '{"a":1}',
    });
  });

  it('keys: none, a wrong one and the public one are refused in Plunk’s shape', async () => {
    const { project } = await newProject(pigeon);
    // untyped: outside the contract (Plunk's compatibility routes)
    expectPlunkError(await pigeon.request('GET', '/v1/contacts'), 401, /API key/);
    expectPlunkError(
      // untyped: outside the contract (Plunk's compatibility routes)
      await pigeon.request('GET', '/v1/contacts', { headers: { authorization: 'Bearer sk_nope' } }),
      401,
    );
    const publicKey = { authorization: `Bearer ${project.publicKey}` };
    // untyped: outside the contract (Plunk's compatibility routes)
    expectPlunkError(await pigeon.request('GET', '/v1/contacts/count', { headers: publicKey }), 401, /secret key/);
    expectPlunkError(
      // untyped: outside the contract (Plunk's compatibility routes)
      await pigeon.request('POST', '/v1/contacts/unsubscribe', { headers: publicKey, body: { email: 'a@b.co' } }),
      401,
    );
  });

  it('leaves the native routes as they are', async () => {
    const { auth } = await newProject(pigeon);
    const contacts = api(pigeon, auth).contacts;
    const res = await contacts.create({ body: { email: 'native@example.com' } });
    expect(res.status).toBe(201);
    const missing = bodyOf(await contacts.get({ params: { id: '00000000-0000-4000-8000-000000000000' } }), 404);
    expect(missing.success).toBe(false);
    expect(missing.error.code).toBe('NOT_FOUND');
  });
});
