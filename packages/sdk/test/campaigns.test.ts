import { HttpResponse } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type Campaign,
  type CampaignCancelResult,
  type CampaignInput,
  type CampaignPage,
  type CampaignSendResult,
  type CampaignStats,
  type Campaigns,
  type CampaignTestResult,
  PigeonError,
} from '../src/index.js';
import { BASE, mockPigeonApi, requestId, uuid } from './msw-server.js';

const { route, pigeon } = mockPigeonApi();

const now = '2026-11-23T10:00:00.000Z';
const id = uuid(100);
const segmentId = uuid(300);

const input: CampaignInput = {
  name: 'November newsletter',
  subject: 'News for {{name}}',
  body: '<p>Hi {{name}}</p>',
  from: 'hello@acme.com',
  fromName: 'Acme',
  audienceType: 'SEGMENT',
  segmentId,
};

const campaign = (overrides: Partial<Campaign> = {}): Campaign => ({
  id,
  name: 'November newsletter',
  description: null,
  subject: 'News for {{name}}',
  body: '<p>Hi {{name}}</p>',
  from: 'hello@acme.com',
  fromName: 'Acme',
  replyTo: null,
  type: 'MARKETING',
  templateId: null,
  status: 'DRAFT',
  audienceType: 'SEGMENT',
  segmentId,
  audienceCondition: null,
  topicId: null,
  scheduledFor: null,
  totalRecipients: 0,
  sentCount: 0,
  deliveredCount: 0,
  openedCount: 0,
  clickedCount: 0,
  bouncedCount: 0,
  complainedCount: 0,
  unsubscribedCount: 0,
  projectId: uuid(200),
  sentAt: null,
  cancelledAt: null,
  createdAt: now,
  updatedAt: now,
  ...overrides,
});

const envelope = (status: number, code: string, message: string) =>
  HttpResponse.json(
    { success: false, error: { code, message, statusCode: status, requestId }, timestamp: now },
    { status },
  );

const query = (request: Request | undefined) => Object.fromEntries(new URL(request?.url ?? '').searchParams);

describe('campaigns: CRUD', () => {
  it('create POSTs the body and unwraps the { success, data } envelope', async () => {
    const requests = route('post', '/campaigns', () =>
      HttpResponse.json({ success: true, data: campaign() }, { status: 201 }),
    );
    const created = await pigeon().campaigns.create(input);
    expectTypeOf(created).toEqualTypeOf<Campaign>();
    expect(created).toEqual(campaign());
    expect(requests).toHaveLength(1);
    expect(requests[0]?.url).toBe(`${BASE}/campaigns`);
    expect(requests[0]?.headers.get('content-type')).toBe('application/json');
    expect(requests[0]?.headers.get('authorization')).toBe('Bearer sk_test');
    expect(requests[0]?.headers.get('idempotency-key')).toBeNull();
    expect(await requests[0]?.json()).toEqual(input);
  });

  it('create sends a FILTERED audience with its condition tree', async () => {
    const requests = route('post', '/campaigns', () =>
      HttpResponse.json({ success: true, data: campaign() }, { status: 201 }),
    );
    const audienceCondition = {
      groups: [{ filters: [{ field: 'data.plan', operator: 'equals' as const, value: 'pro' }] }],
    };
    await pigeon().campaigns.create({ ...input, audienceType: 'FILTERED', segmentId: null, audienceCondition });
    expect(await requests[0]?.json()).toEqual({
      ...input,
      audienceType: 'FILTERED',
      segmentId: null,
      audienceCondition,
    });
  });

  it('list asks for one page with its filters', async () => {
    const page: CampaignPage = { data: [campaign()], page: 2, pageSize: 10, total: 11, totalPages: 2 };
    const requests = route('get', '/campaigns', () => HttpResponse.json(page));
    const result = await pigeon().campaigns.list({
      page: 2,
      pageSize: 10,
      status: 'SENT',
      search: 'news',
      sort: 'name',
      dir: 'asc',
    });
    expectTypeOf(result).toEqualTypeOf<CampaignPage>();
    expect(result).toEqual(page);
    expect(requests[0]?.url.split('?')[0]).toBe(`${BASE}/campaigns`);
    expect(query(requests[0])).toEqual({
      page: '2',
      pageSize: '10',
      status: 'SENT',
      search: 'news',
      sort: 'name',
      dir: 'asc',
    });
  });

  it('get, replace (PUT), delete and duplicate hit their method and path', async () => {
    const got = route('get', '/campaigns/:id', () => HttpResponse.json(campaign({ sentCount: 3 })));
    const replaced = route('put', '/campaigns/:id', () => HttpResponse.json(campaign({ name: 'Renamed' })));
    const deleted = route('delete', '/campaigns/:id', () => new HttpResponse(null, { status: 204 }));
    const duplicated = route('post', '/campaigns/:id/duplicate', () =>
      HttpResponse.json(
        { success: true, data: campaign({ id: uuid(101), name: 'November newsletter (copy)' }) },
        { status: 201 },
      ),
    );
    const campaigns = pigeon().campaigns;

    expect((await campaigns.get(id)).sentCount).toBe(3);
    expect(got[0]?.url).toBe(`${BASE}/campaigns/${id}`);

    const updated = await campaigns.replace(id, { ...input, name: 'Renamed' });
    expectTypeOf(updated).toEqualTypeOf<Campaign>();
    expect(updated.name).toBe('Renamed');
    expect(replaced[0]?.method).toBe('PUT');
    expect(replaced[0]?.url).toBe(`${BASE}/campaigns/${id}`);
    expect(await replaced[0]?.json()).toEqual({ ...input, name: 'Renamed' });

    expect(await campaigns.delete(id)).toBeUndefined();
    expect(deleted[0]?.url).toBe(`${BASE}/campaigns/${id}`);
    expect(await deleted[0]?.text()).toBe('');

    const copy = await campaigns.duplicate(id);
    expectTypeOf(copy).toEqualTypeOf<Campaign>();
    expect(copy).toEqual(campaign({ id: uuid(101), name: 'November newsletter (copy)' })); // unwrapped
    expect(duplicated[0]?.url).toBe(`${BASE}/campaigns/${id}/duplicate`);
    expect(await duplicated[0]?.text()).toBe('');
  });

  it('methods work detached from the client', async () => {
    route('get', '/campaigns/:id', () => HttpResponse.json(campaign()));
    const campaigns = pigeon().campaigns;
    expectTypeOf(campaigns).toEqualTypeOf<Campaigns>();
    const { get } = campaigns;
    expect((await get(id)).id).toBe(id);
  });
});

describe('campaigns: all', () => {
  /** Five campaigns served two per page: three pages. */
  function fiveCampaigns() {
    const rows = [1, 2, 3, 4, 5].map((n) => campaign({ id: uuid(n), name: `Campaign ${n}` }));
    return route('get', '/campaigns', (request) => {
      const url = new URL(request.url);
      const page = Number(url.searchParams.get('page') ?? 1);
      const pageSize = Number(url.searchParams.get('pageSize') ?? 20);
      const data = rows.slice((page - 1) * pageSize, page * pageSize);
      return HttpResponse.json({
        data,
        page,
        pageSize,
        total: rows.length,
        totalPages: Math.ceil(rows.length / pageSize),
      });
    });
  }

  it('walks every offset page, lazily, keeping the filters, and stops at totalPages', async () => {
    const requests = fiveCampaigns();
    const iterator = pigeon().campaigns.all({ pageSize: 2, status: 'DRAFT' });
    expect(requests).toHaveLength(0); // nothing is fetched before iteration
    const seen: string[] = [];
    for await (const item of iterator) {
      expectTypeOf(item).toEqualTypeOf<Campaign>();
      seen.push(item.id);
    }
    expect(seen).toEqual([1, 2, 3, 4, 5].map(uuid));
    expect(requests.map(query)).toEqual([
      { pageSize: '2', status: 'DRAFT', page: '1' },
      { pageSize: '2', status: 'DRAFT', page: '2' },
      { pageSize: '2', status: 'DRAFT', page: '3' },
    ]);
  });

  it('starts at query.page, and stops requesting when the loop breaks', async () => {
    const requests = fiveCampaigns();
    const seen: string[] = [];
    for await (const item of pigeon().campaigns.all({ page: 2, pageSize: 2 })) {
      seen.push(item.id);
      if (seen.length === 1) break;
    }
    expect(seen).toEqual([uuid(3)]);
    expect(requests.map(query)).toEqual([{ page: '2', pageSize: '2' }]);
  });

  it('stops on an empty first page', async () => {
    const requests = route('get', '/campaigns', () =>
      HttpResponse.json({ data: [], page: 1, pageSize: 20, total: 0, totalPages: 0 }),
    );
    const seen: Campaign[] = [];
    for await (const item of pigeon().campaigns.all()) seen.push(item);
    expect(seen).toEqual([]);
    expect(requests).toHaveLength(1);
  });
});

describe('campaigns: test, send, cancel, stats', () => {
  it('test POSTs the address and unwraps the envelope', async () => {
    const data: CampaignTestResult = { emailId: uuid(500), email: 'ada@example.com' };
    const requests = route('post', '/campaigns/:id/test', () => HttpResponse.json({ success: true, data }));
    const result = await pigeon().campaigns.test(id, 'ada@example.com');
    expectTypeOf(result).toEqualTypeOf<CampaignTestResult>();
    expect(result).toEqual(data);
    expect(requests[0]?.url).toBe(`${BASE}/campaigns/${id}/test`);
    expect(await requests[0]?.json()).toEqual({ email: 'ada@example.com' });
  });

  const sent = (scheduledFor: string | null = null) => ({
    success: true,
    data: {
      id,
      name: 'November newsletter',
      status: scheduledFor ? 'SCHEDULED' : 'SENDING',
      scheduledFor,
      totalRecipients: 0,
    },
    message: scheduledFor ? `Campaign scheduled for ${scheduledFor}` : 'Campaign is sending to 0 recipients',
  });

  it('send serialises a Date scheduledFor to ISO and resolves with the data and the message', async () => {
    const at = '2026-12-01T09:30:00.000Z';
    const requests = route('post', '/campaigns/:id/send', () => HttpResponse.json(sent(at)));
    const result = await pigeon().campaigns.send(id, { scheduledFor: new Date(at), timeoutMs: 5_000 });
    expectTypeOf(result).toEqualTypeOf<CampaignSendResult>();
    expect(result).toEqual({
      id,
      name: 'November newsletter',
      status: 'SCHEDULED',
      scheduledFor: at,
      totalRecipients: 0,
      message: `Campaign scheduled for ${at}`,
    });
    expect(requests[0]?.url).toBe(`${BASE}/campaigns/${id}/send`);
    expect(requests[0]?.headers.get('content-type')).toBe('application/json');
    expect(await requests[0]?.json()).toEqual({ scheduledFor: at }); // no request options in the body
  });

  it('send passes strings, numbers and null as they are, and sends {} without scheduledFor', async () => {
    const requests = route('post', '/campaigns/:id/send', () => HttpResponse.json(sent()));
    const campaigns = pigeon().campaigns;
    await campaigns.send(id, { scheduledFor: '2026-12-01 10:00' });
    await campaigns.send(id, { scheduledFor: 1_796_117_400_000 });
    await campaigns.send(id, { scheduledFor: null });
    const now = await campaigns.send(id);
    expect(now).toMatchObject({ status: 'SENDING', message: 'Campaign is sending to 0 recipients' });
    expect(await Promise.all(requests.map((r) => r.json()))).toEqual([
      { scheduledFor: '2026-12-01 10:00' },
      { scheduledFor: 1_796_117_400_000 },
      { scheduledFor: null },
      {},
    ]);
  });

  it('send rejects an invalid Date before any request', async () => {
    const requests = route('post', '/campaigns/:id/send', () => HttpResponse.json(sent()));
    await expect(pigeon().campaigns.send(id, { scheduledFor: new Date('not a date') })).rejects.toThrow(TypeError);
    expect(requests).toHaveLength(0);
  });

  it('cancel POSTs without a body and resolves with the counts and the message', async () => {
    const data = { id, status: 'CANCELLED' as const, sent: 40, cancelled: 60 };
    const requests = route('post', '/campaigns/:id/cancel', () =>
      HttpResponse.json({ success: true, data, message: 'Campaign cancelled; 60 emails will not be sent' }),
    );
    const result = await pigeon().campaigns.cancel(id);
    expectTypeOf(result).toEqualTypeOf<CampaignCancelResult>();
    expect(result).toEqual({ ...data, message: 'Campaign cancelled; 60 emails will not be sent' });
    expect(requests[0]?.url).toBe(`${BASE}/campaigns/${id}/cancel`);
    expect(await requests[0]?.text()).toBe('');
  });

  it('stats GETs the counts as they are (no envelope)', async () => {
    const stats: CampaignStats = {
      totalRecipients: 100,
      sent: 100,
      delivered: 98,
      opened: 50,
      clicked: 10,
      bounced: 2,
      complained: 0,
      unsubscribed: 1,
      cancelled: 0,
      pending: 0,
      rates: { delivery: 0.98, open: 0.5, click: 0.1, bounce: 0.02, complaint: 0, unsubscribe: 0.01 },
    };
    const requests = route('get', '/campaigns/:id/stats', () => HttpResponse.json(stats));
    const result = await pigeon().campaigns.stats(id);
    expectTypeOf(result).toEqualTypeOf<CampaignStats>();
    expect(result).toEqual(stats);
    expect(requests[0]?.url).toBe(`${BASE}/campaigns/${id}/stats`);
  });
});

describe('campaigns: errors', () => {
  it('turns a 409 on send into a PigeonError with code CONFLICT, without retrying', async () => {
    const message = 'The campaign is SENT; only DRAFT or SCHEDULED campaigns can be sent';
    const requests = route('post', '/campaigns/:id/send', () => envelope(409, 'CONFLICT', message));
    const error = await pigeon()
      .campaigns.send(id)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({ status: 409, code: 'CONFLICT', message, requestId });
    expect(requests).toHaveLength(1);
  });

  it('rejects replace and cancel with the 409 CONFLICT', async () => {
    route('put', '/campaigns/:id', () => envelope(409, 'CONFLICT', 'A SENT campaign cannot be changed'));
    route('post', '/campaigns/:id/cancel', () => envelope(409, 'CONFLICT', 'The campaign is DRAFT'));
    const campaigns = pigeon().campaigns;
    await expect(campaigns.replace(id, input)).rejects.toMatchObject({
      name: 'PigeonError',
      status: 409,
      code: 'CONFLICT',
    });
    await expect(campaigns.cancel(id)).rejects.toMatchObject({ name: 'PigeonError', status: 409, code: 'CONFLICT' });
  });

  it('turns a 404 envelope into a PigeonError', async () => {
    route('get', '/campaigns/:id/stats', () => envelope(404, 'NOT_FOUND', 'Campaign not found'));
    await expect(pigeon().campaigns.stats(id)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });
});

describe('campaigns.waitForSent', () => {
  const stats = (sent: number, pending: number, cancelled = 0): CampaignStats => ({
    totalRecipients: 4,
    sent,
    delivered: sent,
    opened: 0,
    clicked: 0,
    bounced: 0,
    complained: 0,
    unsubscribed: 0,
    cancelled,
    pending,
    rates: { delivery: 1, open: 0, click: 0, bounce: 0, complaint: 0, unsubscribe: 0 },
  });

  it('polls until SENT with nothing pending, reporting sent, pending and cancelled as it goes', async () => {
    const states = [
      [campaign({ status: 'SCHEDULED' }), stats(0, 0)],
      [campaign({ status: 'SENDING', totalRecipients: 4 }), stats(1, 3)],
      [campaign({ status: 'SENT', totalRecipients: 4 }), stats(3, 0, 1)],
    ] as const;
    route('get', '/campaigns/:id', (_r, n) => HttpResponse.json(states[Math.min(n, 2)]?.[0]));
    route('get', '/campaigns/:id/stats', (_r, n) => HttpResponse.json(states[Math.min(n, 2)]?.[1]));
    const seen: Array<[string, number, number, number]> = [];
    const done = await pigeon().campaigns.waitForSent(id, {
      intervalMs: 1,
      onProgress: (p) => seen.push([p.status, p.sent, p.pending, p.cancelled]),
    });
    expect(seen).toEqual([
      ['SCHEDULED', 0, 0, 0],
      ['SENDING', 1, 3, 0],
      ['SENT', 3, 0, 1],
    ]);
    expect(done).toMatchObject({ status: 'SENT', totalRecipients: 4, sent: 3, cancelled: 1 });
  });

  it('rejects a DRAFT at once, and times out with the last progress', async () => {
    route('get', '/campaigns/:id', () => HttpResponse.json(campaign({ status: 'DRAFT' })));
    route('get', '/campaigns/:id/stats', () => HttpResponse.json(stats(0, 0)));
    await expect(pigeon().campaigns.waitForSent(id)).rejects.toMatchObject({ code: 'CONFLICT' });

    route('get', '/campaigns/:id', () => HttpResponse.json(campaign({ status: 'SENDING' })));
    route('get', '/campaigns/:id/stats', () => HttpResponse.json(stats(1, 3)));
    const error = await pigeon()
      .campaigns.waitForSent(id, { intervalMs: 5, timeoutMs: 40 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({ code: 'TIMEOUT', status: 0, details: { progress: { status: 'SENDING', sent: 1 } } });
  });
});
