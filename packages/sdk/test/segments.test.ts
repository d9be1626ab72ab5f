import { HttpResponse } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type ConditionTreeInput,
  type Contact,
  type MembersChange,
  PigeonError,
  type Segment,
  type SegmentComputeResult,
  type SegmentContactPage,
  type Segments,
} from '../src/index.js';
import { BASE, mockPigeonApi, requestId, uuid } from './msw-server.js';

const { route, pigeon } = mockPigeonApi();

const now = '2026-11-23T10:00:00.000Z';
const id = uuid(100);

const condition: ConditionTreeInput = {
  logic: 'OR',
  groups: [
    { filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }] },
    {
      filters: [{ field: 'event.signup', operator: 'triggeredWithin', value: 7, unit: 'days' }],
      conditions: { groups: [{ filters: [{ field: 'subscribed', operator: 'equals', value: true }] }] },
    },
  ],
};

const segment = (overrides: Partial<Segment> = {}): Segment => ({
  id,
  name: 'Pro or new',
  description: null,
  type: 'DYNAMIC',
  condition: {
    logic: 'OR',
    groups: [{ filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }] }],
  },
  trackMembership: false,
  slug: 'pro-or-new',
  memberCount: 0,
  memberCountAt: null,
  projectId: uuid(200),
  createdAt: now,
  updatedAt: now,
  ...overrides,
});

const contact = (n: number): Contact => ({
  id: uuid(n),
  email: `user${n}@example.com`,
  subscribed: true,
  data: {},
  createdAt: now,
  updatedAt: now,
});

const envelope = (status: number, code: string, message: string) =>
  HttpResponse.json(
    { success: false, error: { code, message, statusCode: status, requestId }, timestamp: now },
    { status },
  );

const query = (request: Request | undefined) => Object.fromEntries(new URL(request?.url ?? '').searchParams);

describe('segments: CRUD', () => {
  it('create POSTs the body, condition tree included, and resolves with the segment', async () => {
    const requests = route('post', '/segments', () => HttpResponse.json(segment(), { status: 201 }));
    const created = await pigeon().segments.create({ name: 'Pro or new', condition, trackMembership: true });
    expectTypeOf(created).toEqualTypeOf<Segment>();
    expect(created).toEqual(segment());
    expect(requests).toHaveLength(1);
    expect(requests[0]?.headers.get('content-type')).toBe('application/json');
    expect(requests[0]?.headers.get('authorization')).toBe('Bearer sk_test');
    expect(await requests[0]?.json()).toEqual({ name: 'Pro or new', condition, trackMembership: true });
  });

  it('create of a STATIC segment sends its type and no condition', async () => {
    const requests = route('post', '/segments', () =>
      HttpResponse.json(segment({ type: 'STATIC', condition: null }), { status: 201 }),
    );
    await pigeon().segments.create({ name: 'VIP', type: 'STATIC', description: 'Hand-picked' });
    expect(await requests[0]?.json()).toEqual({ name: 'VIP', type: 'STATIC', description: 'Hand-picked' });
  });

  it('list, get, update and delete hit their method and path', async () => {
    const listed = route('get', '/segments', () => HttpResponse.json([segment(), segment({ id: uuid(101) })]));
    const got = route('get', '/segments/:id', () => HttpResponse.json(segment({ memberCount: 3 })));
    const patched = route('patch', '/segments/:id', () => HttpResponse.json(segment({ name: 'Renamed' })));
    const deleted = route('delete', '/segments/:id', () => new HttpResponse(null, { status: 204 }));
    const segments = pigeon().segments;

    const all = await segments.list();
    expectTypeOf(all).toEqualTypeOf<Segment[]>();
    expect(all.map((s) => s.id)).toEqual([id, uuid(101)]);
    expect(listed[0]?.url).toBe(`${BASE}/segments`);

    expect((await segments.get(id)).memberCount).toBe(3);
    expect(got[0]?.url).toBe(`${BASE}/segments/${id}`);

    const updated = await segments.update(id, { name: 'Renamed', condition: { groups: [{ conditions: condition }] } });
    expect(updated.name).toBe('Renamed');
    expect(patched[0]?.url).toBe(`${BASE}/segments/${id}`);
    expect(await patched[0]?.json()).toEqual({ name: 'Renamed', condition: { groups: [{ conditions: condition }] } });

    expect(await segments.delete(id)).toBeUndefined();
    expect(deleted[0]?.url).toBe(`${BASE}/segments/${id}`);
    expect(await deleted[0]?.text()).toBe('');
  });

  it('methods work detached from the client', async () => {
    route('get', '/segments/:id', () => HttpResponse.json(segment()));
    const segments = pigeon().segments;
    expectTypeOf(segments).toEqualTypeOf<Segments>();
    const { get } = segments;
    expect((await get(id)).id).toBe(id);
  });
});

describe('segments: members', () => {
  it('contacts asks for one page with page and pageSize', async () => {
    const requests = route('get', '/segments/:id/contacts', () =>
      HttpResponse.json({ data: [contact(3)], page: 2, pageSize: 50, total: 51 }),
    );
    const page = await pigeon().segments.contacts(id, { page: 2, pageSize: 50 });
    expectTypeOf(page).toEqualTypeOf<SegmentContactPage>();
    expect(page).toEqual({ data: [contact(3)], page: 2, pageSize: 50, total: 51 });
    expect(requests[0]?.url.split('?')[0]).toBe(`${BASE}/segments/${id}/contacts`);
    expect(query(requests[0])).toEqual({ page: '2', pageSize: '50' });
  });

  /** Five members served two per page: pages 1 and 2 are full, page 3 is short. */
  function fiveMembers(total = 5) {
    const members = [1, 2, 3, 4, 5].map(contact);
    return route('get', '/segments/:id/contacts', (request) => {
      const url = new URL(request.url);
      const page = Number(url.searchParams.get('page') ?? 1);
      const pageSize = Number(url.searchParams.get('pageSize') ?? 20);
      const data = members.slice((page - 1) * pageSize, page * pageSize);
      return HttpResponse.json({ data, page, pageSize, total });
    });
  }

  it('members walks page after page, lazily, and stops after the short last page', async () => {
    const requests = fiveMembers();
    const iterator = pigeon().segments.members(id, { pageSize: 2 });
    expect(requests).toHaveLength(0); // nothing is fetched before iteration
    const seen: string[] = [];
    for await (const member of iterator) {
      expectTypeOf(member).toEqualTypeOf<Contact>();
      seen.push(member.email);
    }
    expect(seen).toEqual([1, 2, 3, 4, 5].map((n) => `user${n}@example.com`));
    expect(requests.map(query)).toEqual([
      { pageSize: '2', page: '1' },
      { pageSize: '2', page: '2' },
      { pageSize: '2', page: '3' },
    ]);
  });

  it('members reads past a stale total: the total is a cached count, the pages are live', async () => {
    const requests = fiveMembers(2); // the cached total says 2, five members are live
    const seen: Contact[] = [];
    for await (const member of pigeon().segments.members(id, { pageSize: 2 })) seen.push(member);
    expect(seen.map((c) => c.id)).toEqual([1, 2, 3, 4, 5].map(uuid));
    expect(requests).toHaveLength(3);
  });

  it('members stops after a short page even when the total promised more (members left meanwhile)', async () => {
    const requests = fiveMembers(9);
    const seen: Contact[] = [];
    for await (const member of pigeon().segments.members(id, { pageSize: 2 })) seen.push(member);
    expect(seen).toHaveLength(5);
    expect(requests).toHaveLength(3);
  });

  it('members starts at query.page, and stops requesting when the loop breaks', async () => {
    const requests = fiveMembers();
    const seen: string[] = [];
    for await (const member of pigeon().segments.members(id, { page: 2, pageSize: 2 })) {
      seen.push(member.id);
      if (seen.length === 1) break;
    }
    expect(seen).toEqual([uuid(3)]);
    expect(requests.map(query)).toEqual([{ page: '2', pageSize: '2' }]);
  });

  it('members stops on an empty first page', async () => {
    const requests = route('get', '/segments/:id/contacts', () =>
      HttpResponse.json({ data: [], page: 1, pageSize: 20, total: 0 }),
    );
    const seen: Contact[] = [];
    for await (const member of pigeon().segments.members(id)) seen.push(member);
    expect(seen).toEqual([]);
    expect(requests).toHaveLength(1);
  });

  it('addMembers POSTs the emails and its flags, without the request options', async () => {
    const change: MembersChange = {
      results: [
        { email: 'ada@example.com', status: 'added', contactId: uuid(1) },
        { email: 'new@example.com', status: 'created', contactId: uuid(2) },
      ],
      memberCount: 2,
    };
    const requests = route('post', '/segments/:id/members', () => HttpResponse.json(change));
    const emails = ['ada@example.com', 'new@example.com'];
    const result = await pigeon().segments.addMembers(id, emails, {
      createMissing: true,
      subscribed: false,
      timeoutMs: 5_000,
    });
    expectTypeOf(result).toEqualTypeOf<MembersChange>();
    expect(result).toEqual(change);
    expect(requests[0]?.url).toBe(`${BASE}/segments/${id}/members`);
    expect(await requests[0]?.json()).toEqual({ emails, createMissing: true, subscribed: false });

    await pigeon().segments.addMembers(id, ['ada@example.com']);
    expect(await requests[1]?.json()).toEqual({ emails: ['ada@example.com'] });
  });

  it('removeMembers sends a DELETE with the emails as its JSON body', async () => {
    const change: MembersChange = {
      results: [
        { email: 'ada@example.com', status: 'removed', contactId: uuid(1) },
        { email: 'who@example.com', status: 'not_found', contactId: null },
      ],
      memberCount: 1,
    };
    const requests = route('delete', '/segments/:id/members', () => HttpResponse.json(change));
    expect(await pigeon().segments.removeMembers(id, ['ada@example.com', 'who@example.com'])).toEqual(change);
    expect(requests[0]?.url).toBe(`${BASE}/segments/${id}/members`);
    expect(requests[0]?.headers.get('content-type')).toBe('application/json');
    expect(await requests[0]?.json()).toEqual({ emails: ['ada@example.com', 'who@example.com'] });
  });
});

describe('segments: compute and refresh', () => {
  it('compute POSTs without a body and resolves with the entries and exits', async () => {
    const requests = route('post', '/segments/:id/compute', () =>
      HttpResponse.json({ entered: 4, exited: 1, memberCount: 10 }),
    );
    const result = await pigeon().segments.compute(id);
    expectTypeOf(result).toEqualTypeOf<SegmentComputeResult>();
    expect(result).toEqual({ entered: 4, exited: 1, memberCount: 10 });
    expect(requests[0]?.url).toBe(`${BASE}/segments/${id}/compute`);
    expect(await requests[0]?.text()).toBe('');
  });

  it('refresh POSTs without a body and resolves with the recounted segment', async () => {
    const requests = route('post', '/segments/:id/refresh', () =>
      HttpResponse.json(segment({ memberCount: 10, memberCountAt: now })),
    );
    expect(await pigeon().segments.refresh(id)).toMatchObject({ memberCount: 10, memberCountAt: now });
    expect(requests[0]?.url).toBe(`${BASE}/segments/${id}/refresh`);
    expect(await requests[0]?.text()).toBe('');
  });
});

describe('segments: errors', () => {
  it('turns a 404 envelope into a PigeonError, without retrying', async () => {
    const requests = route('get', '/segments/:id', () => envelope(404, 'NOT_FOUND', 'Segment not found'));
    const error = await pigeon()
      .segments.get(id)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND', message: 'Segment not found', requestId });
    expect(requests).toHaveLength(1);
  });

  it("turns create's bare 400 into a PigeonError with code BAD_REQUEST", async () => {
    route('post', '/segments', () =>
      HttpResponse.json({ error: 'A STATIC segment has no condition' }, { status: 400 }),
    );
    const error = await pigeon()
      .segments.create({ name: 'VIP', type: 'STATIC', condition })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({ status: 400, code: 'BAD_REQUEST', message: 'A STATIC segment has no condition' });
  });

  it('rejects delete with the 409 CONFLICT while the segment is in use', async () => {
    route('delete', '/segments/:id', () => envelope(409, 'CONFLICT', 'Segment is used by 1 campaign'));
    await expect(pigeon().segments.delete(id)).rejects.toMatchObject({
      name: 'PigeonError',
      status: 409,
      code: 'CONFLICT',
    });
  });

  it('members rejects with the PigeonError of a failing page', async () => {
    const requests = route('get', '/segments/:id/contacts', (_request, n) =>
      n === 0
        ? HttpResponse.json({ data: [contact(1), contact(2)], page: 1, pageSize: 2, total: 6 })
        : envelope(404, 'NOT_FOUND', 'Segment not found'),
    );
    const seen: string[] = [];
    const error = await (async () => {
      for await (const member of pigeon().segments.members(id, { pageSize: 2 })) seen.push(member.id);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([uuid(1), uuid(2)]);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect(requests).toHaveLength(2);
  });
});
