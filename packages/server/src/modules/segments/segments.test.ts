import type { contract } from '@pigeon/contract';
import type { ClientInferRequest } from '@ts-rest/core';
import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { insertManyContacts } from '../../../test/fixtures/contacts.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { sql } from '../../db/query.js';
import { withQueryLimits } from '../../db/sql.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  // Live counts of projects over 1,000 contacts are sampled (the default is 100,000).
  pigeon = await startTestPigeon({ env: { SEGMENT_LIVE_COUNT_EXACT_UP_TO: '1000' } });
});
afterAll(() => pigeon?.stop());

type Auth = Record<string, string>;
const plan = (value: string) => ({
  logic: 'AND' as const,
  groups: [{ filters: [{ field: 'data.plan', operator: 'equals' as const, value }] }],
});

async function seedContacts(auth: Auth, contacts: Array<{ email: string; data?: Record<string, unknown> }>) {
  for (const c of contacts) {
    const res = await api(pigeon, auth).contacts.create({ body: c });
    expect(res.status).toBe(201);
  }
}

const createSegment = async (auth: Auth, body: ClientInferRequest<typeof contract.segments.create>['body']) =>
  api(pigeon, auth).segments.create({ body });

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
    expect(bodyOf(again, 201).slug).toBe('pro-users-2');

    const list = await api(pigeon, auth).segments.list();
    expect(list.status).toBe(200);
    const ids = [bodyOf(again, 201).id, bodyOf(vip, 201).id, bodyOf(pro, 201).id];
    expect(bodyOf(list, 200).map((s: { id: string }) => s.id)).toEqual(ids);
    const got = await api(pigeon, auth).segments.get({ params: { id: bodyOf(pro, 201).id } });
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
      // Invalid on purpose (several do not fit the contract's types): sent untyped.
      // untyped: wrong on purpose (bodies the contract's types refuse)
      const res = await pigeon.request('POST', '/segments', { headers: auth, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body)).toEqual(['error']);
      expect(res.body.error).toMatch(message);
    }
    expect(bodyOf(await api(pigeon, auth).segments.list(), 200)).toEqual([]);
  });

  it('refuses trees 10,000 levels deep or 10,000 filters wide with a clear 400, quickly', async () => {
    const { auth } = await newProject(pigeon);
    // Written as text: JSON.stringify itself cannot nest 10,000 levels.
    const deep = `${'{"logic":"AND","groups":[{"filters":[],"conditions":'.repeat(10_000)}${JSON.stringify(plan('pro'))}${'}]}'.repeat(10_000)}`;
    // untyped: raw body (conditions nested past the depth limit)
    const tooDeep = await pigeon.request('POST', '/segments', {
      headers: { ...auth, 'content-type': 'application/json' },
      rawBody: `{"name":"deep","condition":${deep}}`,
    });
    expect(tooDeep.status).toBe(400);
    // Refused by the request-wide depth limit (64 JSON levels) before any schema walks it.
    expect(tooDeep.body.error).toMatch(/^condition\.groups\.0\.conditions[.\w]*: nests deeper than 64 levels/);
    // A tree too deep for conditions but within that limit gets the condition engine's own message.
    const seven = `${'{"logic":"AND","groups":[{"filters":[],"conditions":'.repeat(7)}${JSON.stringify(plan('pro'))}${'}]}'.repeat(7)}`;
    // untyped: raw body (conditions nested past the depth limit)
    const tooDeepForConditions = await pigeon.request('POST', '/segments', {
      headers: { ...auth, 'content-type': 'application/json' },
      rawBody: `{"name":"seven","condition":${seven}}`,
    });
    expect(tooDeepForConditions.status).toBe(400);
    expect(tooDeepForConditions.body.error).toMatch(/^condition: Conditions nest at most 5 levels deep/);
    const filters = Array.from({ length: 10_000 }, () => ({
      field: 'data.plan',
      operator: 'equals' as const,
      value: 'x',
    }));
    const tooWide = await createSegment(auth, { name: 'wide', condition: { groups: [{ filters }] } });
    expect(bodyOf(tooWide, 400).error).toMatch(/^condition: A condition holds at most 100 filters/);
    const patched = await api(pigeon, auth).segments.update({
      params: { id: bodyOf(await createSegment(auth, { name: 'ok', condition: plan('a') }), 201).id },
      body: { condition: { groups: [{ filters }] } },
    });
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
      // untyped: outside the contract (a test-only route)
      const res = await slow.request('GET', '/test/slow');
      expect(expectEnvelope(res, 503, 'QUERY_TIMEOUT').suggestion).toMatch(/Narrow the condition/);
    } finally {
      await slow.stop();
    }
  });

  it("counts what a condition matches without saving a segment (a builder's live count); bad trees answer 400", async () => {
    const { auth } = await newProject(pigeon);
    await seedContacts(auth, [
      { email: 'a@count.example', data: { plan: 'pro', seats: 5 } },
      { email: 'b@count.example', data: { plan: 'pro', seats: 1 } },
      { email: 'c@count.example', data: { plan: 'free' } },
    ]);
    const client = api(pigeon, auth).segments;
    const nested = {
      logic: 'OR' as const,
      groups: [
        {
          filters: [{ field: 'data.plan', operator: 'equals' as const, value: 'pro' }],
          conditions: {
            logic: 'AND' as const,
            groups: [{ filters: [{ field: 'data.seats', operator: 'greaterThan' as const, value: 2 }] }],
          },
        },
        { filters: [{ field: 'email', operator: 'equals' as const, value: 'c@count.example' }] },
      ],
    };
    const counted = bodyOf(await client.count({ body: { condition: nested } }), 200);
    const saved = bodyOf(await createSegment(auth, { name: 'Nested', condition: nested }), 201);
    expect(counted.count).toBe(saved.memberCount);
    expect(counted.count).toBe(2);
    expect(bodyOf(await client.count({ body: { condition: plan('pro') } }), 200)).toEqual({
      count: 2,
      sampled: false,
      sampleSize: 3,
    });
    expect(bodyOf(await client.list({}), 200)).toHaveLength(1); // counting saved nothing
    const unknownField = { groups: [{ filters: [{ field: 'nope', operator: 'equals' as const, value: 1 }] }] };
    const bad = await client.count({ body: { condition: unknownField } });
    expect(expectEnvelope(bad, 400, 'INVALID_CONDITION').errors?.[0]?.field).toMatch(/^condition\./);
    const badOperator = { groups: [{ filters: [{ field: 'data.plan', operator: 'nope' as 'equals', value: 1 }] }] };
    expectEnvelope(await client.count({ body: { condition: badOperator } }), 422, 'VALIDATION_ERROR');
    const other = await newProject(pigeon);
    expect(bodyOf(await api(pigeon, other.auth).segments.count({ body: { condition: plan('pro') } }), 200)).toEqual({
      count: 0,
      sampled: false,
      sampleSize: 0,
    });
  });

  it('a live count in a project over SEGMENT_LIVE_COUNT_EXACT_UP_TO contacts is taken on a repeatable sample and extrapolated', async () => {
    const { project, auth } = await newProject(pigeon);
    await insertManyContacts(pigeon.deps.db.pool, project.id, 20000, {
      prefix: 'many',
      data: sql`jsonb_build_object('age', i % 80)`,
    });
    await pigeon.deps.db.pool.query('ANALYZE contacts');
    const over = { groups: [{ filters: [{ field: 'data.age', operator: 'greaterThan' as const, value: 39 }] }] };
    const client = api(pigeon, auth).segments;
    const live = bodyOf(await client.count({ body: { condition: over } }), 200);
    expect(live.sampled).toBe(true);
    expect(live.sampleSize).toBeGreaterThan(300);
    expect(live.sampleSize).toBeLessThan(5_000);
    // Saving counts exactly: half of the ages 0–79 are over 39.
    const saved = bodyOf(await createSegment(auth, { name: 'Over 39', condition: over }), 201);
    expect(saved.memberCount).toBe(10_000);
    expect(Math.abs(live.count - saved.memberCount)).toBeLessThan(saved.memberCount * 0.15);
    // Repeatable: the same tree, the same answer.
    expect(bodyOf(await client.count({ body: { condition: over } }), 200)).toEqual(live);
  });

  it('PATCH updates name, description and condition; keeps the slug; refuses a condition on STATIC', async () => {
    const { auth } = await newProject(pigeon);
    await seedContacts(auth, [{ email: 'a@x.example', data: { plan: 'free' } }]);
    const seg = bodyOf(await createSegment(auth, { name: 'Pro', condition: plan('pro') }), 201);
    expect(seg.memberCount).toBe(0);
    const patched = await api(pigeon, auth).segments.update({
      params: { id: seg.id },
      body: { name: 'Free now', description: 'changed', condition: plan('free') },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Free now', description: 'changed', slug: 'pro', memberCount: 1 });
    const bad = await api(pigeon, auth).segments.update({
      params: { id: seg.id },
      body: { condition: { groups: [{ filters: [{ field: 'createdAt', operator: 'within', value: 3 }] }] } },
    });
    expect(expectEnvelope(bad, 400, 'INVALID_CONDITION').errors).toEqual([
      {
        field: 'condition.groups.0.filters.0.unit',
        message: 'within: needs a unit (seconds, minutes, hours or days)',
        code: 'invalid_condition',
      },
    ]);
    const stat = bodyOf(await createSegment(auth, { name: 'S', type: 'STATIC' }), 201);
    const refused = await api(pigeon, auth).segments.update({
      params: { id: stat.id },
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
    const seg = bodyOf(await createSegment(auth, { name: 'Pro', condition: plan('pro') }), 201);
    const page1 = await api(pigeon, auth).segments.contacts({
      params: { id: seg.id },
      query: { page: 1, pageSize: 2 },
    });
    expect(page1.body).toMatchObject({ page: 1, pageSize: 2, total: 3 });
    expect(bodyOf(page1, 200).data.map((c: { email: string }) => c.email)).toEqual(['p2@x.example', 'p1@x.example']);
    const page2 = await api(pigeon, auth).segments.contacts({
      params: { id: seg.id },
      query: { page: 2, pageSize: 2 },
    });
    expect(bodyOf(page2, 200).data.map((c: { email: string }) => c.email)).toEqual(['p0@x.example']);
    // Live: a contact that stops matching leaves the pages at once.
    const p2 = bodyOf(page1, 200).data[0];
    assert(p2);
    await api(pigeon, auth).contacts.update({ params: { id: p2.id }, body: { data: { plan: 'free' } } });
    const live = await api(pigeon, auth).segments.contacts({ params: { id: seg.id } });
    expect(bodyOf(live, 200).data.map((c: { email: string }) => c.email)).toEqual(['p1@x.example', 'p0@x.example']);
    // The total agrees with the items at once (no cached count 15 minutes old), on every page.
    expect(bodyOf(live, 200).total).toBe(2);
    const last = await api(pigeon, auth).segments.contacts({ params: { id: seg.id }, query: { page: 2, pageSize: 1 } });
    expect(last.body).toMatchObject({ total: 2, data: [{ email: 'p0@x.example' }] });
    const beyond = await api(pigeon, auth).segments.contacts({
      params: { id: seg.id },
      query: { page: 3, pageSize: 1 },
    });
    expect(beyond.body).toMatchObject({ total: 2, data: [] });
    const segment = await api(pigeon, auth).segments.get({ params: { id: seg.id } });
    expect(segment.body).toMatchObject({ memberCount: 2, memberCountAt: expect.any(String) });
    const refreshed = await api(pigeon, auth).segments.refresh({ params: { id: seg.id } });
    expect(bodyOf(refreshed, 200).memberCount).toBe(2);
    const tooBig = await api(pigeon, auth).segments.contacts({ params: { id: seg.id }, query: { pageSize: 101 } });
    expectEnvelope(tooBig, 422, 'VALIDATION_ERROR');
  });

  it('manages STATIC members with a result per email', async () => {
    const { auth } = await newProject(pigeon);
    await seedContacts(auth, [{ email: 'known@x.example' }, { email: 'other@x.example' }]);
    const seg = bodyOf(await createSegment(auth, { name: 'List', type: 'STATIC' }), 201);
    const added = await api(pigeon, auth).segments.addMembers({
      params: { id: seg.id },
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
    const more = await api(pigeon, auth).segments.addMembers({
      params: { id: seg.id },
      body: { emails: ['known@x.example', 'new@x.example'], createMissing: true, subscribed: false },
    });
    expect(bodyOf(more, 200).results.map((r: { status: string }) => r.status)).toEqual(['already_member', 'created']);
    expect(bodyOf(more, 200).memberCount).toBe(2);
    const createdId = bodyOf(more, 200).results[1]?.contactId;
    assert(createdId);
    const created = await api(pigeon, auth).contacts.get({ params: { id: createdId } });
    expect(created.body).toMatchObject({ email: 'new@x.example', subscribed: false });

    const removed = await api(pigeon, auth).segments.removeMembers({
      params: { id: seg.id },
      body: { emails: ['known@x.example', 'other@x.example', 'nobody@x.example'] },
    });
    expect(bodyOf(removed, 200).results.map((r: { status: string }) => r.status)).toEqual([
      'removed',
      'not_member',
      'not_found',
    ]);
    expect(bodyOf(removed, 200).memberCount).toBe(1);
    const page = await api(pigeon, auth).segments.contacts({ params: { id: seg.id } });
    expect(page.body).toMatchObject({ total: 1, data: [{ email: 'new@x.example' }] });
    // Deleting a member contact keeps the count exact (the member row goes with it).
    const [member] = bodyOf(page, 200).data;
    assert(member);
    await api(pigeon, auth).contacts.delete({ params: { id: member.id } });
    expect(bodyOf(await api(pigeon, auth).segments.get({ params: { id: seg.id } }), 200).memberCount).toBe(0);

    const tooMany = await api(pigeon, auth).segments.addMembers({
      params: { id: seg.id },
      body: { emails: Array.from({ length: 1001 }, (_, i) => `m${i}@x.example`) },
    });
    expectEnvelope(tooMany, 422, 'VALIDATION_ERROR');
    const dynamic = bodyOf(await createSegment(auth, { name: 'D', condition: plan('pro') }), 201);
    const notStatic = await api(pigeon, auth).segments.addMembers({
      params: { id: dynamic.id },
      body: { emails: ['known@x.example'] },
    });
    expectEnvelope(notStatic, 400, 'BAD_REQUEST');
  });

  it('segments referring to segments: unknown ids, cycles, and 409 on delete while in use', async () => {
    const { auth } = await newProject(pigeon);
    const inner = bodyOf(await createSegment(auth, { name: 'Inner', type: 'STATIC' }), 201);
    const member = (id: string) => ({
      groups: [{ filters: [{ field: `segment.${id}`, operator: 'memberOfSegment' as const }] }],
    });
    const outer = bodyOf(await createSegment(auth, { name: 'Outer', condition: member(inner.id) }), 201);
    const middle = bodyOf(await createSegment(auth, { name: 'Middle', condition: member(outer.id) }), 201);
    expect(middle.type).toBe('DYNAMIC');

    const cycle = await api(pigeon, auth).segments.update({
      params: { id: outer.id },
      body: { condition: member(middle.id) },
    });
    expect(expectEnvelope(cycle, 400, 'INVALID_CONDITION').message).toMatch(/refers back to this segment/);
    const self = await api(pigeon, auth).segments.update({
      params: { id: outer.id },
      body: { condition: member(outer.id) },
    });
    expect(expectEnvelope(self, 400, 'INVALID_CONDITION').message).toMatch(/cannot refer to itself/);

    const other = await newProject(pigeon);
    const foreign = await createSegment(other.auth, { name: 'X', condition: member(inner.id) });
    expect(foreign.status).toBe(400);
    expect(bodyOf(foreign, 400).error).toMatch(/does not exist in this project/);

    const inUse = await api(pigeon, auth).segments.delete({ params: { id: inner.id } });
    expect(expectEnvelope(inUse, 409, 'CONFLICT').message).toContain('Outer');
    expect(bodyOf(await api(pigeon, auth).segments.usage({ params: { id: inner.id } }), 200)).toEqual({
      campaigns: [],
      workflows: [],
      segments: [{ id: outer.id, name: 'Outer' }],
    });
    expect((await api(pigeon, auth).segments.delete({ params: { id: middle.id } })).status).toBe(204);
    expect((await api(pigeon, auth).segments.delete({ params: { id: outer.id } })).status).toBe(204);
    expect((await api(pigeon, auth).segments.delete({ params: { id: inner.id } })).status).toBe(204);
    expect((await api(pigeon, auth).segments.get({ params: { id: inner.id } })).status).toBe(404);
  });

  it("another project's segment is a 404 on every route", async () => {
    const { auth } = await newProject(pigeon);
    const seg = bodyOf(await createSegment(auth, { name: 'Mine', type: 'STATIC' }), 201);
    const other = await newProject(pigeon);
    const theirs = api(pigeon, other.auth).segments;
    const params = { id: seg.id };
    for (const res of [
      await theirs.get({ params }),
      await theirs.update({ params, body: { name: 'stolen' } }),
      await theirs.delete({ params }),
      await theirs.contacts({ params }),
      await theirs.addMembers({ params, body: { emails: ['a@x.example'] } }),
      await theirs.removeMembers({ params, body: { emails: ['a@x.example'] } }),
      await theirs.compute({ params }),
      await theirs.refresh({ params }),
      await theirs.usage({ params }),
    ]) {
      expectEnvelope(res, 404, 'NOT_FOUND');
    }
    expect(bodyOf(await api(pigeon, auth).segments.get({ params: { id: seg.id } }), 200).name).toBe('Mine');
    const pk = { authorization: `Bearer ${other.project.publicKey}` };
    expectEnvelope(await api(pigeon, pk).segments.list(), 401, 'INVALID_API_KEY');
  });

  it('the reference index answers field and event usage', async () => {
    const { auth } = await newProject(pigeon);
    const seg = bodyOf(
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
      }),
      201,
    );
    const field = await api(pigeon, auth).contacts.fieldUsage({ params: { field: 'data.address' } });
    expect(field.body).toEqual({
      field: 'data.address',
      segments: [{ id: seg.id, name: 'Buyers in Oslo' }],
      campaigns: [],
      workflows: [],
      templates: [],
    });
    const event = await api(pigeon, auth).events.usage({ params: { eventName: 'purchase' } });
    expect(event.body).toEqual({
      name: 'purchase',
      segments: [{ id: seg.id, name: 'Buyers in Oslo' }],
      campaigns: [],
      workflows: [],
    });
    // Saving the same condition again keeps its references.
    const same = await api(pigeon, auth).segments.update({
      params: { id: seg.id },
      body: { name: 'Buyers in Oslo', condition: seg.condition },
    });
    expect(same.status).toBe(200);
    const kept = await api(pigeon, auth).events.usage({ params: { eventName: 'purchase' } });
    expect(bodyOf(kept, 200).segments).toEqual([{ id: seg.id, name: 'Buyers in Oslo' }]);
    await api(pigeon, auth).segments.delete({ params: { id: seg.id } });
    const after = await api(pigeon, auth).events.usage({ params: { eventName: 'purchase' } });
    expect(bodyOf(after, 200).segments).toEqual([]);
  });

  it('templates record the data fields their placeholders read', async () => {
    const { auth } = await newProject(pigeon);
    await api(pigeon, auth).domains.create({ body: { domain: 'refs.example' } });
    const template = await api(pigeon, auth).templates.create({
      body: {
        name: 'Plan mail',
        subject: 'Hi {{firstName ?? "there"}}',
        body: '<p>{{data.plan}} {{unsubscribeUrl}}</p>',
        from: 'a@refs.example',
      },
    });
    expect(template.status).toBe(201);
    const usage = async (field: string) =>
      bodyOf(await api(pigeon, auth).contacts.fieldUsage({ params: { field } }), 200).templates;
    expect(await usage('data.plan')).toEqual([{ id: bodyOf(template, 201).id, name: 'Plan mail' }]);
    expect(await usage('firstName')).toEqual([{ id: bodyOf(template, 201).id, name: 'Plan mail' }]);
    expect(await usage('unsubscribeUrl')).toEqual([]);
    await api(pigeon, auth).templates.update({ params: { id: bodyOf(template, 201).id }, body: { subject: 'Hello' } });
    expect(await usage('firstName')).toEqual([]);
  });

  it('the field catalog samples a large project instead of reading every contact', async () => {
    const { project, auth } = await newProject(pigeon);
    await insertManyContacts(pigeon.deps.db.pool, project.id, 30000, {
      data: sql`CASE WHEN i % 2 = 0 THEN '{"plan":"pro"}'::jsonb ELSE '{"age":3}'::jsonb END`,
    });
    const res = await api(pigeon, auth).contacts.fields();
    expect(res.body).toMatchObject({ totalContacts: 30_000, sampled: true });
    expect(bodyOf(res, 200).sampleSize).toBeGreaterThan(5_000);
    expect(bodyOf(res, 200).sampleSize).toBeLessThan(30_000);
    const plan = bodyOf(res, 200).fields.find((f: { field: string }) => f.field === 'data.plan');
    assert(plan);
    expect(plan.coverage).toBeGreaterThan(40);
    expect(plan.coverage).toBeLessThan(60);
    const small = await newProject(pigeon);
    await seedContacts(small.auth, [{ email: 'one@x.example', data: { plan: 'pro' } }]);
    const exact = await api(pigeon, small.auth).contacts.fields();
    expect(exact.body).toMatchObject({ totalContacts: 1, sampled: false, sampleSize: 1 });
  });
});
