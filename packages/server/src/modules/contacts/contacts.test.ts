import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';

import { eventNames, newProject, waitForJob } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { queryRows, sql } from '../../db/query.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

describe('POST /contacts', () => {
  it('creates a subscribed contact with a normalised email (201), then updates it by email (200)', async () => {
    const { auth } = await newProject(pigeon);
    const created = await api(pigeon, auth).contacts.create({
      body: { email: '  Ada@Example.COM ', data: { plan: 'pro' } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      email: 'ada@example.com',
      subscribed: true,
      data: { plan: 'pro' },
      _meta: { isNew: true, isUpdate: false },
    });
    const updated = await api(pigeon, auth).contacts.create({ body: { email: 'ada@example.com', data: { seats: 3 } } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id: bodyOf(created, 201).id,
      subscribed: true,
      data: { plan: 'pro', seats: 3 },
      _meta: { isNew: false, isUpdate: true },
    });
  });

  it('keeps an existing contact subscription unless it is given', async () => {
    const { auth } = await newProject(pigeon);
    const first = bodyOf(
      await api(pigeon, auth).contacts.create({ body: { email: 'bo@example.com', subscribed: false } }),
      201,
    );
    expect(first.subscribed).toBe(false);
    const again = await api(pigeon, auth).contacts.create({ body: { email: 'bo@example.com' } });
    expect(bodyOf(again, 200).subscribed).toBe(false);
    expect(await eventNames(pigeon, first.id)).toEqual([]);
    const flipped = await api(pigeon, auth).contacts.create({ body: { email: 'bo@example.com', subscribed: true } });
    expect(bodyOf(flipped, 200).subscribed).toBe(true);
    expect(await eventNames(pigeon, first.id)).toEqual(['contact.subscribed']);
  });

  it('answers a missing or malformed email with the bare { error } 400 and stores nothing', async () => {
    const { auth } = await newProject(pigeon);
    // untyped: wrong on purpose (a body the contract's types refuse)
    const missing = await pigeon.request('POST', '/contacts', { headers: auth, body: { data: { a: 1 } } }); // no email: not a valid body
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: expect.stringContaining('email') });
    const bad = await api(pigeon, auth).contacts.create({ body: { email: 'not-an-email' } });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body)).toEqual(['error']);
    const list = await api(pigeon, auth).contacts.list();
    expect(bodyOf(list, 200).total).toBe(0);
  });

  it('applies the data rules: primitives stored, null deletes, "" skipped, transient and reserved keys dropped', async () => {
    const { auth } = await newProject(pigeon);
    await api(pigeon, auth).contacts.create({
      body: { email: 'd@example.com', data: { plan: 'pro', city: 'Oslo', age: 41 } },
    });
    const res = await api(pigeon, auth).contacts.create({
      body: {
        email: 'd@example.com',
        data: {
          city: null,
          plan: '',
          vip: true,
          code: { value: 'ABC123', persistent: false },
          nested: { tier: 2 },
          id: 'x',
          email: 'evil@example.com',
          pigeon_id: 'x',
          pigeon_email: 'x',
          unsubscribeUrl: 'x',
          subscribeUrl: 'x',
          manageUrl: 'x',
        },
      },
    });
    expect(bodyOf(res, 200).email).toBe('d@example.com');
    expect(bodyOf(res, 200).data).toEqual({ plan: 'pro', age: 41, vip: true, nested: { tier: 2 } });
  });
});

describe('GET /contacts', () => {
  async function seed(auth: Record<string, string>, emails: string[]) {
    const ids: string[] = [];
    for (const email of emails) ids.push(bodyOf(await api(pigeon, auth).contacts.create({ body: { email } }), 201).id);
    return ids;
  }

  it('pages with a cursor: default 20, clamps limit to 100, total only on the first page', async () => {
    const { auth } = await newProject(pigeon);
    const emails = Array.from({ length: 25 }, (_, i) => `p${String(i).padStart(2, '0')}@example.com`);
    await seed(auth, emails);
    const first = await api(pigeon, auth).contacts.list();
    expect(bodyOf(first, 200).data).toHaveLength(20);
    expect(first.body).toMatchObject({ total: 25, hasMore: true, cursor: expect.any(String) });
    const second = await api(pigeon, auth).contacts.list({ query: { cursor: bodyOf(first, 200).cursor ?? undefined } });
    expect(bodyOf(second, 200).data).toHaveLength(5);
    expect(second.body).toMatchObject({ total: 0, hasMore: false, cursor: null });
    const clamped = await api(pigeon, auth).contacts.list({ query: { limit: 500 } });
    expect(clamped.status).toBe(200);
    expect(bodyOf(clamped, 200).data).toHaveLength(25);
    // newest first by default
    expect(bodyOf(first, 200).data[0]?.email).toBe('p24@example.com');
    expectEnvelope(await api(pigeon, auth).contacts.list({ query: { limit: 0 } }), 422, 'VALIDATION_ERROR');
    expectEnvelope(await api(pigeon, auth).contacts.list({ query: { cursor: 'garbage' } }), 422, 'VALIDATION_ERROR');
  });

  it('searches email case-insensitively, filters by subscription, sorts by email, falls back on unknown sort', async () => {
    const { auth } = await newProject(pigeon);
    await seed(auth, ['zed@alpha.io', 'amy@beta.io', 'max@alpha.io']);
    await api(pigeon, auth).contacts.create({ body: { email: 'off@alpha.io', subscribed: false } });
    const search = await api(pigeon, auth).contacts.list({ query: { search: 'ALPHA', sort: 'email', dir: 'asc' } });
    expect(bodyOf(search, 200).data.map((c: { email: string }) => c.email)).toEqual([
      'max@alpha.io',
      'off@alpha.io',
      'zed@alpha.io',
    ]);
    expect(bodyOf(search, 200).total).toBe(3);
    const unsubscribed = await api(pigeon, auth).contacts.list({ query: { subscribed: 'false' } });
    expect(bodyOf(unsubscribed, 200).data.map((c: { email: string }) => c.email)).toEqual(['off@alpha.io']);
    const fallback = await api(pigeon, auth).contacts.list({ query: { sort: 'bogus', dir: 'sideways' } });
    expect(fallback.status).toBe(200);
    expect(bodyOf(fallback, 200).data[0]?.email).toBe('off@alpha.io'); // createdAt desc

    const literal = await api(pigeon, auth).contacts.list({ query: { search: '%' } });
    expect(bodyOf(literal, 200).total).toBe(0); // % is matched literally, not as a wildcard
  });

  it('keeps cursors stable while contacts are inserted and deleted between pages', async () => {
    const { auth } = await newProject(pigeon);
    const emails = Array.from({ length: 30 }, (_, i) => `s${String(i).padStart(2, '0')}@example.com`);
    const ids = await seed(auth, emails);
    for (const sort of ['email', 'createdAt']) {
      for (const dir of ['asc', 'desc']) {
        const seen: string[] = [];
        let cursor: string | null = null;
        let round = 0;
        do {
          const query: { limit: number; sort: string; dir: string; cursor?: string } = {
            limit: 7,
            sort,
            dir,
            cursor: cursor ?? undefined,
          };

          const page = bodyOf(await api(pigeon, auth).contacts.list({ query }), 200);
          seen.push(...page.data.map((c: { email: string }) => c.email));
          cursor = page.cursor;
          // Between pages: add contacts that sort at both ends, and delete one not seen yet.
          await seed(auth, [`a${sort}${dir}${round}@example.com`, `zz${sort}${dir}${round}@example.com`]);
          round++;
        } while (cursor);
        const original = seen.filter((e) => /^s\d\d@/.test(e));
        expect(new Set(seen).size).toBe(seen.length); // no duplicates
        expect(original.sort()).toEqual(emails.filter((e) => original.includes(e)).sort());
        expect(original.length).toBe(emails.length); // no skips of rows that existed throughout
      }
    }
    expect(ids).toHaveLength(30);
  });
});

describe('one contact', () => {
  it('gets, patches (recording subscription changes), and deletes with its events', async () => {
    const { auth } = await newProject(pigeon);
    const contact = bodyOf(
      await api(pigeon, auth).contacts.create({ body: { email: 'one@example.com', data: { a: 1 } } }),
      201,
    );
    expect(bodyOf(await api(pigeon, auth).contacts.get({ params: { id: contact.id } }), 200)).toMatchObject({
      email: 'one@example.com',
      data: { a: 1 },
    });
    const patched = await api(pigeon, auth).contacts.update({
      params: { id: contact.id },
      body: { email: 'One.New@example.com', subscribed: false, data: { a: null, b: 'x' } },
    });
    expect(patched.body).toMatchObject({ email: 'one.new@example.com', subscribed: false, data: { b: 'x' } });
    expect(await eventNames(pigeon, contact.id)).toEqual(['contact.unsubscribed']);
    await api(pigeon, auth).contacts.update({ params: { id: contact.id }, body: { subscribed: false } });
    expect(await eventNames(pigeon, contact.id)).toEqual(['contact.unsubscribed']); // no flip, no event
    const deleted = await api(pigeon, auth).contacts.delete({ params: { id: contact.id } });
    expect(deleted.status).toBe(204);
    expect(await (deleted.body as unknown as Blob).text()).toBe(''); // no content-type: ts-rest hands back a Blob
    expect(await eventNames(pigeon, contact.id)).toEqual([]);
    expectEnvelope(await api(pigeon, auth).contacts.get({ params: { id: contact.id } }), 404, 'NOT_FOUND');
  });

  it('refuses an email another contact has with 409, changing nothing', async () => {
    const { auth } = await newProject(pigeon);
    await api(pigeon, auth).contacts.create({ body: { email: 'taken@example.com' } });
    const other = bodyOf(await api(pigeon, auth).contacts.create({ body: { email: 'other@example.com' } }), 201);
    const res = await api(pigeon, auth).contacts.update({
      params: { id: other.id },
      body: { email: 'taken@example.com', data: { x: 1 } },
    });
    expectEnvelope(res, 409, 'CONFLICT');
    expect(bodyOf(await api(pigeon, auth).contacts.get({ params: { id: other.id } }), 200)).toMatchObject({
      email: 'other@example.com',
      data: {},
    });
  });

  it("answers another project's contact with 404 everywhere", async () => {
    const mine = await newProject(pigeon);
    const theirs = await newProject(pigeon);
    const contact = bodyOf(await api(pigeon, theirs.auth).contacts.create({ body: { email: 'x@example.com' } }), 201);
    const params = { id: contact.id };
    const asMine = api(pigeon, mine.auth).contacts;
    for (const res of [
      await asMine.get({ params }),
      await asMine.update({ params, body: { subscribed: false } }),
      await asMine.delete({ params }),
    ]) {
      expectEnvelope(res, 404, 'NOT_FOUND');
    }
    expect(bodyOf(await api(pigeon, theirs.auth).contacts.get({ params: { id: contact.id } }), 200).subscribed).toBe(
      true,
    );
    expect(bodyOf(await api(pigeon, mine.auth).contacts.list(), 200).total).toBe(0);
  });

  it('works with a session and X-Project-Id as well as the secret key', async () => {
    const { owner, project } = await newProject(pigeon);
    const res = await api(pigeon, { cookie: owner.cookie, 'x-project-id': project.id }).contacts.create({
      body: { email: 'dash@example.com' },
    });
    expect(res.status).toBe(201);
    const publicKey = await api(pigeon, { authorization: `Bearer ${project.publicKey}` }).contacts.list();
    expectEnvelope(publicKey, 401, 'INVALID_API_KEY');
  });
});

describe('POST /contacts/lookup', () => {
  it('says which emails exist, with ids, up to 500 per call', async () => {
    const { auth } = await newProject(pigeon);
    const a = bodyOf(await api(pigeon, auth).contacts.create({ body: { email: 'a@example.com' } }), 201);
    const res = await api(pigeon, auth).contacts.lookup({ body: { emails: ['A@example.com', 'nobody@example.com'] } });
    expect(res.body).toEqual({ found: [{ email: 'a@example.com', id: a.id }], missing: ['nobody@example.com'] });
    const tooMany = Array.from({ length: 501 }, (_, i) => `u${i}@example.com`);
    expectEnvelope(await api(pigeon, auth).contacts.lookup({ body: { emails: tooMany } }), 422, 'VALIDATION_ERROR');
  });
});

describe('maintained totals', () => {
  it('stay exact through every write path: upsert, track, patch, import, bulk jobs and delete', async () => {
    const { auth, project } = await newProject(pigeon);
    const totals = async () => {
      const all = bodyOf(await api(pigeon, auth).contacts.list(), 200).total;
      const on = bodyOf(await api(pigeon, auth).contacts.list({ query: { subscribed: 'true' } }), 200).total;
      const off = bodyOf(await api(pigeon, auth).contacts.list({ query: { subscribed: 'false' } }), 200).total;
      const rows = await queryRows(
        pigeon.deps.db.pool,
        sql`SELECT count(*)::int AS n, (count(*) FILTER (WHERE subscribed))::int AS s FROM contacts WHERE project_id = ${project.id}`,
      );
      expect([all, on, off]).toEqual([rows[0]?.n, rows[0]?.s, rows[0]?.n - rows[0]?.s]);
      return [all, on, off];
    };
    const a = bodyOf(await api(pigeon, auth).contacts.create({ body: { email: 't1@example.com' } }), 201);
    await api(pigeon, auth).contacts.create({ body: { email: 't2@example.com', subscribed: false } });
    await api(pigeon, auth).contacts.create({ body: { email: 't1@example.com', data: { x: 1 } } });
    expect(await totals()).toEqual([2, 1, 1]);
    await api(pigeon, { authorization: `Bearer ${project.publicKey}` }).events.track({
      body: { email: 't3@example.com', event: 'e' },
    });
    await api(pigeon, auth).contacts.update({ params: { id: a.id }, body: { subscribed: false } });
    expect(await totals()).toEqual([3, 1, 2]);
    const form = new FormData();
    form.append('file', new Blob(['email,subscribed\nt4@example.com,yes\nt2@example.com,true\n']), 'c.csv');
    const imported = bodyOf(await api(pigeon, auth).contacts.import({ body: form }), 202);
    await waitForJob(pigeon, `/contacts/import/${imported.jobId}`, auth);
    expect(await totals()).toEqual([4, 3, 1]);
    const bulk = await api(pigeon, auth).contacts.bulkDelete({ body: { contactIds: [a.id] } });
    await waitForJob(pigeon, `/contacts/bulk/${bodyOf(bulk, 202).jobId}`, auth);
    expect(await totals()).toEqual([3, 3, 0]);
  });
});

describe('contact data limits', () => {
  const keys = (n: number, prefix = 'k') =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));

  it('refuses over-long keys, too many keys and over-large data in one request with 422 naming the field', async () => {
    const { project, auth } = await newProject(pigeon);
    const { rows: before } = await pigeon.deps.db.pool.query('SELECT count(*)::int AS n FROM contacts');
    const longKey = 'k'.repeat(101);
    const patchLike = await api(pigeon, { authorization: `Bearer ${project.publicKey}` }).events.track({
      body: { email: 'limits@example.com', event: 'e', data: { [longKey]: 1 } },
    });
    const error = expectEnvelope(patchLike, 422, 'VALIDATION_ERROR');
    expect(error.errors?.[0]).toMatchObject({ field: `data.${'k'.repeat(40)}`, code: 'too_big' });
    for (const data of [keys(201), { big: 'x'.repeat(70_000) }]) {
      const res = await api(pigeon, auth).contacts.update({
        params: { id: '00000000-0000-7000-8000-000000000000' },
        body: { data },
      });
      expect(expectEnvelope(res, 422, 'VALIDATION_ERROR').errors?.[0]).toMatchObject({
        field: 'data',
        code: 'too_big',
      });
    }
    const { rows: after } = await pigeon.deps.db.pool.query('SELECT count(*)::int AS n FROM contacts');
    expect(after[0].n).toBe(before[0].n);
    // At the limit is fine.
    const ok = await api(pigeon, auth).contacts.create({
      body: { email: 'limits@example.com', data: { ...keys(199), ['k'.repeat(100)]: 1 } },
    });
    expect(ok.status).toBe(201);
  });

  it('refuses growing a stored contact past 200 keys over several requests, keeping what it had', async () => {
    const { project, auth } = await newProject(pigeon);
    const track = (data: Record<string, unknown>) =>
      api(pigeon, { authorization: `Bearer ${project.publicKey}` }).events.track({
        body: { email: 'grows@example.com', event: 'e', data },
      });
    expect((await track(keys(150, 'a'))).status).toBe(200);
    const refused = await track(keys(100, 'b'));
    expect(expectEnvelope(refused, 422, 'VALIDATION_ERROR').errors?.[0]).toMatchObject({ field: 'data' });
    const [contact] = bodyOf(await api(pigeon, auth).contacts.list({ query: { search: 'grows' } }), 200).data;
    assert(contact);
    expect(Object.keys(contact.data)).toHaveLength(150);
    const patched = await api(pigeon, auth).contacts.update({
      params: { id: contact.id },
      body: { data: keys(60, 'c') },
    });
    expectEnvelope(patched, 422, 'VALIDATION_ERROR');
  });
});
