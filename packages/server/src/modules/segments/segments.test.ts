import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { withQueryLimits } from '../../db/sql.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

type Auth = Record<string, string>;
const plan = (value: string) => ({
  logic: 'AND',
  groups: [{ filters: [{ field: 'data.plan', operator: 'equals', value }] }],
});

async function seedContacts(auth: Auth, contacts: Array<{ email: string; data?: Record<string, unknown> }>) {
  for (const c of contacts) {
    const res = await pigeon.request('POST', '/contacts', { headers: auth, body: c });
    expect(res.status).toBe(201);
  }
}

const createSegment = async (auth: Auth, body: Record<string, unknown>) =>
  pigeon.request('POST', '/segments', { headers: auth, body });

describe('segments API', () => {
  it('creates DYNAMIC (default) and STATIC segments, counts them, and lists newest first', async () => {
    const { auth } = await newProject(pigeon);
    await seedContacts(auth, [
      { email: 'a@x.example', data: { plan: 'pro' } },
      { email: 'b@x.example', data: { plan: 'pro' } },
      { email: 'c@x.example', data: { plan: 'free' } },
    ]);
    const pro = await createSegment(auth, { name: 'Pro users!', condition: plan('pro') });
    expect(pro.status).toBe(201);
    expect(pro.body).toMatchObject({
      name: 'Pro users!',
      description: null,
      type: 'DYNAMIC',
      trackMembership: false,
      slug: 'pro-users',
      memberCount: 2,
      condition: plan('pro'),
    });
    const vip = await createSegment(auth, { name: 'VIP', type: 'STATIC', description: 'hand-picked' });
    expect(vip.body).toMatchObject({ type: 'STATIC', condition: null, memberCount: 0, slug: 'vip' });
    const again = await createSegment(auth, { name: 'Pro users', condition: plan('free') });
    expect(again.body.slug).toBe('pro-users-2');

    const list = await pigeon.request('GET', '/segments', { headers: auth });
    expect(list.status).toBe(200);
    expect(list.body.map((s: { id: string }) => s.id)).toEqual([again.body.id, vip.body.id, pro.body.id]);
    const got = await pigeon.request('GET', `/segments/${pro.body.id}`, { headers: auth });
    expect(got.body).toEqual(pro.body);
  });

  it('answers the bare 400 on create: DYNAMIC without a condition, STATIC with one, bad names and bad trees', async () => {
    const { auth } = await newProject(pigeon);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: 'x' }, /condition/],
      [{ name: 'x', condition: 'data.plan = pro' }, /condition/],
      [{ name: 'x', type: 'STATIC', condition: plan('pro') }, /STATIC/],
      [{ name: 'x'.repeat(101), condition: plan('pro') }, /name/],
      [{ name: 'x', description: 'd'.repeat(501), condition: plan('pro') }, /description/],
      [
        {
          name: 'x',
          condition: { logic: 'AND', groups: [{ filters: [{ field: 'data.plan', operator: 'like', value: 1 }] }] },
        },
        /condition\.groups\.0\.filters\.0\.operator/,
      ],
      [
        {
          name: 'x',
          condition: { groups: [{ filters: [{ field: 'subscribed', operator: 'greaterThan', value: 1 }] }] },
        },
        /^condition\.groups\.0\.filters\.0\.operator: "greaterThan" does not apply to subscribed/,
      ],
    ];
    for (const [body, message] of cases) {
      const res = await createSegment(auth, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body)).toEqual(['error']);
      expect(res.body.error).toMatch(message);
    }
    expect((await pigeon.request('GET', '/segments', { headers: auth })).body).toEqual([]);
  });

  it('refuses trees 10,000 levels deep or 10,000 filters wide with a clear 400, quickly', async () => {
    const { auth } = await newProject(pigeon);
    // Written as text: JSON.stringify itself cannot nest 10,000 levels.
    const deep = `${'{"logic":"AND","groups":[{"filters":[],"conditions":'.repeat(10_000)}${JSON.stringify(plan('pro'))}${'}]}'.repeat(10_000)}`;
    const tooDeep = await pigeon.request('POST', '/segments', {
      headers: { ...auth, 'content-type': 'application/json' },
      rawBody: `{"name":"deep","condition":${deep}}`,
    });
    expect(tooDeep.status).toBe(400);
    // Refused by the request-wide depth limit (64 JSON levels) before any schema walks it.
    expect(tooDeep.body.error).toMatch(/^condition\.groups\.0\.conditions[.\w]*: nests deeper than 64 levels/);
    // A tree too deep for conditions but within that limit gets the condition engine's own message.
    const seven = `${'{"logic":"AND","groups":[{"filters":[],"conditions":'.repeat(7)}${JSON.stringify(plan('pro'))}${'}]}'.repeat(7)}`;
    const tooDeepForConditions = await pigeon.request('POST', '/segments', {
      headers: { ...auth, 'content-type': 'application/json' },
      rawBody: `{"name":"seven","condition":${seven}}`,
    });
    expect(tooDeepForConditions.status).toBe(400);
    expect(tooDeepForConditions.body.error).toMatch(/^condition: Conditions nest at most 5 levels deep/);
    const filters = Array.from({ length: 10_000 }, () => ({ field: 'data.plan', operator: 'equals', value: 'x' }));
    const tooWide = await createSegment(auth, { name: 'wide', condition: { groups: [{ filters }] } });
    expect(tooWide.body.error).toMatch(/^condition: A condition holds at most 100 filters/);
    const patched = await pigeon.request(
      'PATCH',
      `/segments/${(await createSegment(auth, { name: 'ok', condition: plan('a') })).body.id}`,
      {
        headers: auth,
        body: { condition: { groups: [{ filters }] } },
      },
    );
    expect(expectEnvelope(patched, 422, 'VALIDATION_ERROR').errors?.[0]).toMatchObject({ field: 'condition' });
  });

  it('a condition query that runs past its timeout is cancelled and answered 503 QUERY_TIMEOUT', async () => {
    const pool = pigeon.deps.db.pool;
    await expect(withQueryLimits(pool, { timeoutMs: 50 }, (c) => c.query('SELECT pg_sleep(2)'))).rejects.toMatchObject({
      code: '57014',
    });
    const slow = await startTestPigeon({
      env: { SEGMENT_QUERY_TIMEOUT_SECONDS: '1' },
      mountExtraRoutes: (app, deps) =>
        app.get('/test/slow', async (_req, _res, next) => {
          await withQueryLimits(deps.db.pool, { timeoutMs: 20 }, (c) => c.query('SELECT pg_sleep(1)')).catch(next);
        }),
    });
    try {
      const res = await slow.request('GET', '/test/slow');
      expect(expectEnvelope(res, 503, 'QUERY_TIMEOUT').suggestion).toMatch(/Narrow the condition/);
    } finally {
      await slow.stop();
    }
  });

  it('PATCH updates name, description and condition; keeps the slug; refuses a condition on STATIC', async () => {
    const { auth } = await newProject(pigeon);
    await seedContacts(auth, [{ email: 'a@x.example', data: { plan: 'free' } }]);
    const seg = (await createSegment(auth, { name: 'Pro', condition: plan('pro') })).body;
    expect(seg.memberCount).toBe(0);
    const patched = await pigeon.request('PATCH', `/segments/${seg.id}`, {
      headers: auth,
      body: { name: 'Free now', description: 'changed', condition: plan('free') },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Free now', description: 'changed', slug: 'pro', memberCount: 1 });
    const bad = await pigeon.request('PATCH', `/segments/${seg.id}`, {
      headers: auth,
      body: { condition: { groups: [{ filters: [{ field: 'createdAt', operator: 'within', value: 3 }] }] } },
    });
    expect(expectEnvelope(bad, 400, 'INVALID_CONDITION').errors).toEqual([
      {
        field: 'condition.groups.0.filters.0.unit',
        message: 'within: needs a unit (seconds, minutes, hours or days)',
        code: 'invalid_condition',
      },
    ]);
    const stat = (await createSegment(auth, { name: 'S', type: 'STATIC' })).body;
    const refused = await pigeon.request('PATCH', `/segments/${stat.id}`, {
      headers: auth,
      body: { condition: plan('x') },
    });
    expectEnvelope(refused, 400, 'BAD_REQUEST');
  });

  it('pages live members with total; pageSize over 100 is refused', async () => {
    const { auth } = await newProject(pigeon);
    await seedContacts(
      auth,
      Array.from({ length: 5 }, (_, i) => ({ email: `p${i}@x.example`, data: { plan: i < 3 ? 'pro' : 'free' } })),
    );
    const seg = (await createSegment(auth, { name: 'Pro', condition: plan('pro') })).body;
    const page1 = await pigeon.request('GET', `/segments/${seg.id}/contacts?page=1&pageSize=2`, { headers: auth });
    expect(page1.body).toMatchObject({ page: 1, pageSize: 2, total: 3 });
    expect(page1.body.data.map((c: { email: string }) => c.email)).toEqual(['p2@x.example', 'p1@x.example']);
    const page2 = await pigeon.request('GET', `/segments/${seg.id}/contacts?page=2&pageSize=2`, { headers: auth });
    expect(page2.body.data.map((c: { email: string }) => c.email)).toEqual(['p0@x.example']);
    // Live: a contact that stops matching leaves the pages at once.
    const p2 = page1.body.data[0].id;
    await pigeon.request('PATCH', `/contacts/${p2}`, { headers: auth, body: { data: { plan: 'free' } } });
    const live = await pigeon.request('GET', `/segments/${seg.id}/contacts`, { headers: auth });
    expect(live.body.data.map((c: { email: string }) => c.email)).toEqual(['p1@x.example', 'p0@x.example']);
    // The total agrees with the items at once (no cached count 15 minutes old), on every page.
    expect(live.body.total).toBe(2);
    const last = await pigeon.request('GET', `/segments/${seg.id}/contacts?page=2&pageSize=1`, { headers: auth });
    expect(last.body).toMatchObject({ total: 2, data: [{ email: 'p0@x.example' }] });
    const beyond = await pigeon.request('GET', `/segments/${seg.id}/contacts?page=3&pageSize=1`, { headers: auth });
    expect(beyond.body).toMatchObject({ total: 2, data: [] });
    const segment = await pigeon.request('GET', `/segments/${seg.id}`, { headers: auth });
    expect(segment.body).toMatchObject({ memberCount: 2, memberCountAt: expect.any(String) });
    const refreshed = await pigeon.request('POST', `/segments/${seg.id}/refresh`, { headers: auth });
    expect(refreshed.body.memberCount).toBe(2);
    const tooBig = await pigeon.request('GET', `/segments/${seg.id}/contacts?pageSize=101`, { headers: auth });
    expectEnvelope(tooBig, 422, 'VALIDATION_ERROR');
  });

  it('manages STATIC members with a result per email', async () => {
    const { auth } = await newProject(pigeon);
    await seedContacts(auth, [{ email: 'known@x.example' }, { email: 'other@x.example' }]);
    const seg = (await createSegment(auth, { name: 'List', type: 'STATIC' })).body;
    const added = await pigeon.request('POST', `/segments/${seg.id}/members`, {
      headers: auth,
      body: { emails: ['Known@x.example', 'missing@x.example', 'known@x.example'] },
    });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({
      results: [
        { email: 'known@x.example', status: 'added', contactId: expect.any(String) },
        { email: 'missing@x.example', status: 'not_found', contactId: null },
      ],
      memberCount: 1,
    });
    const more = await pigeon.request('POST', `/segments/${seg.id}/members`, {
      headers: auth,
      body: { emails: ['known@x.example', 'new@x.example'], createMissing: true, subscribed: false },
    });
    expect(more.body.results.map((r: { status: string }) => r.status)).toEqual(['already_member', 'created']);
    expect(more.body.memberCount).toBe(2);
    const created = await pigeon.request('GET', `/contacts/${more.body.results[1].contactId}`, { headers: auth });
    expect(created.body).toMatchObject({ email: 'new@x.example', subscribed: false });

    const removed = await pigeon.request('DELETE', `/segments/${seg.id}/members`, {
      headers: auth,
      body: { emails: ['known@x.example', 'other@x.example', 'nobody@x.example'] },
    });
    expect(removed.body.results.map((r: { status: string }) => r.status)).toEqual([
      'removed',
      'not_member',
      'not_found',
    ]);
    expect(removed.body.memberCount).toBe(1);
    const page = await pigeon.request('GET', `/segments/${seg.id}/contacts`, { headers: auth });
    expect(page.body).toMatchObject({ total: 1, data: [{ email: 'new@x.example' }] });
    // Deleting a member contact keeps the count exact (the member row goes with it).
    await pigeon.request('DELETE', `/contacts/${page.body.data[0].id}`, { headers: auth });
    expect((await pigeon.request('GET', `/segments/${seg.id}`, { headers: auth })).body.memberCount).toBe(0);

    const tooMany = await pigeon.request('POST', `/segments/${seg.id}/members`, {
      headers: auth,
      body: { emails: Array.from({ length: 1001 }, (_, i) => `m${i}@x.example`) },
    });
    expectEnvelope(tooMany, 422, 'VALIDATION_ERROR');
    const dynamic = (await createSegment(auth, { name: 'D', condition: plan('pro') })).body;
    const notStatic = await pigeon.request('POST', `/segments/${dynamic.id}/members`, {
      headers: auth,
      body: { emails: ['known@x.example'] },
    });
    expectEnvelope(notStatic, 400, 'BAD_REQUEST');
  });

  it('segments referring to segments: unknown ids, cycles, and 409 on delete while in use', async () => {
    const { auth } = await newProject(pigeon);
    const inner = (await createSegment(auth, { name: 'Inner', type: 'STATIC' })).body;
    const member = (id: string) => ({
      groups: [{ filters: [{ field: `segment.${id}`, operator: 'memberOfSegment' }] }],
    });
    const outer = (await createSegment(auth, { name: 'Outer', condition: member(inner.id) })).body;
    const middle = (await createSegment(auth, { name: 'Middle', condition: member(outer.id) })).body;
    expect(middle.type).toBe('DYNAMIC');

    const cycle = await pigeon.request('PATCH', `/segments/${outer.id}`, {
      headers: auth,
      body: { condition: member(middle.id) },
    });
    expect(expectEnvelope(cycle, 400, 'INVALID_CONDITION').message).toMatch(/refers back to this segment/);
    const self = await pigeon.request('PATCH', `/segments/${outer.id}`, {
      headers: auth,
      body: { condition: member(outer.id) },
    });
    expect(expectEnvelope(self, 400, 'INVALID_CONDITION').message).toMatch(/cannot refer to itself/);

    const other = await newProject(pigeon);
    const foreign = await createSegment(other.auth, { name: 'X', condition: member(inner.id) });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toMatch(/does not exist in this project/);

    const inUse = await pigeon.request('DELETE', `/segments/${inner.id}`, { headers: auth });
    expect(expectEnvelope(inUse, 409, 'CONFLICT').message).toContain('Outer');
    expect((await pigeon.request('DELETE', `/segments/${middle.id}`, { headers: auth })).status).toBe(204);
    expect((await pigeon.request('DELETE', `/segments/${outer.id}`, { headers: auth })).status).toBe(204);
    expect((await pigeon.request('DELETE', `/segments/${inner.id}`, { headers: auth })).status).toBe(204);
    expect((await pigeon.request('GET', `/segments/${inner.id}`, { headers: auth })).status).toBe(404);
  });

  it("another project's segment is a 404 on every route", async () => {
    const { auth } = await newProject(pigeon);
    const seg = (await createSegment(auth, { name: 'Mine', type: 'STATIC' })).body;
    const other = await newProject(pigeon);
    const h = { headers: other.auth };
    for (const [method, path, body] of [
      ['GET', `/segments/${seg.id}`],
      ['PATCH', `/segments/${seg.id}`, { name: 'stolen' }],
      ['DELETE', `/segments/${seg.id}`],
      ['GET', `/segments/${seg.id}/contacts`],
      ['POST', `/segments/${seg.id}/members`, { emails: ['a@x.example'] }],
      ['DELETE', `/segments/${seg.id}/members`, { emails: ['a@x.example'] }],
      ['POST', `/segments/${seg.id}/compute`],
      ['POST', `/segments/${seg.id}/refresh`],
    ] as const) {
      const res = await pigeon.request(method, path, { ...h, body });
      expectEnvelope(res, 404, 'NOT_FOUND');
    }
    expect((await pigeon.request('GET', `/segments/${seg.id}`, { headers: auth })).body.name).toBe('Mine');
    const pk = { authorization: `Bearer ${other.project.publicKey}` };
    expectEnvelope(await pigeon.request('GET', '/segments', { headers: pk }), 401, 'INVALID_API_KEY');
  });

  it('the reference index answers field and event usage', async () => {
    const { auth } = await newProject(pigeon);
    const seg = (
      await createSegment(auth, {
        name: 'Buyers in Oslo',
        condition: {
          groups: [
            {
              filters: [
                { field: 'data.address.city', operator: 'equals', value: 'Oslo' },
                { field: 'event.purchase', operator: 'triggered' },
              ],
            },
          ],
        },
      })
    ).body;
    const field = await pigeon.request('GET', '/contacts/fields/data.address/usage', { headers: auth });
    expect(field.body).toEqual({
      field: 'data.address',
      segments: [{ id: seg.id, name: 'Buyers in Oslo' }],
      campaigns: [],
      workflows: [],
      templates: [],
    });
    const event = await pigeon.request('GET', '/events/purchase/usage', { headers: auth });
    expect(event.body).toEqual({
      name: 'purchase',
      segments: [{ id: seg.id, name: 'Buyers in Oslo' }],
      campaigns: [],
      workflows: [],
    });
    // Saving the same condition again keeps its references.
    const same = await pigeon.request('PATCH', `/segments/${seg.id}`, {
      headers: auth,
      body: { name: 'Buyers in Oslo', condition: seg.condition },
    });
    expect(same.status).toBe(200);
    const kept = await pigeon.request('GET', '/events/purchase/usage', { headers: auth });
    expect(kept.body.segments).toEqual([{ id: seg.id, name: 'Buyers in Oslo' }]);
    await pigeon.request('DELETE', `/segments/${seg.id}`, { headers: auth });
    const after = await pigeon.request('GET', '/events/purchase/usage', { headers: auth });
    expect(after.body.segments).toEqual([]);
  });

  it('templates record the data fields their placeholders read', async () => {
    const { auth } = await newProject(pigeon);
    await pigeon.request('POST', '/domains', { headers: auth, body: { domain: 'refs.example' } });
    const template = await pigeon.request('POST', '/templates', {
      headers: auth,
      body: {
        name: 'Plan mail',
        subject: 'Hi {{firstName ?? "there"}}',
        body: '<p>{{data.plan}} {{unsubscribeUrl}}</p>',
        from: 'a@refs.example',
      },
    });
    expect(template.status).toBe(201);
    const usage = async (field: string) =>
      (await pigeon.request('GET', `/contacts/fields/${field}/usage`, { headers: auth })).body.templates;
    expect(await usage('data.plan')).toEqual([{ id: template.body.id, name: 'Plan mail' }]);
    expect(await usage('firstName')).toEqual([{ id: template.body.id, name: 'Plan mail' }]);
    expect(await usage('unsubscribeUrl')).toEqual([]);
    await pigeon.request('PATCH', `/templates/${template.body.id}`, { headers: auth, body: { subject: 'Hello' } });
    expect(await usage('firstName')).toEqual([]);
  });

  it('the field catalog samples a large project instead of reading every contact', async () => {
    const { project, auth } = await newProject(pigeon);
    await pigeon.deps.db.pool.query(
      `INSERT INTO contacts (id, project_id, email, subscribed, data)
       SELECT uuidv7_compat(), $1, 'bulk' || i || '@x.example', true,
              CASE WHEN i % 2 = 0 THEN '{"plan":"pro"}'::jsonb ELSE '{"age":3}'::jsonb END
       FROM generate_series(1, 30000) AS i`,
      [project.id],
    );
    const res = await pigeon.request('GET', '/contacts/fields', { headers: auth });
    expect(res.body).toMatchObject({ totalContacts: 30_000, sampled: true });
    expect(res.body.sampleSize).toBeGreaterThan(5_000);
    expect(res.body.sampleSize).toBeLessThan(30_000);
    const plan = res.body.fields.find((f: { field: string }) => f.field === 'data.plan');
    expect(plan.coverage).toBeGreaterThan(40);
    expect(plan.coverage).toBeLessThan(60);
    const small = await newProject(pigeon);
    await seedContacts(small.auth, [{ email: 'one@x.example', data: { plan: 'pro' } }]);
    const exact = await pigeon.request('GET', '/contacts/fields', { headers: small.auth });
    expect(exact.body).toMatchObject({ totalContacts: 1, sampled: false, sampleSize: 1 });
  });
});
