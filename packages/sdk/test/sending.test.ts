import { HttpResponse } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  createPigeon,
  type Domain,
  type DomainDmarc,
  Pigeon,
  PigeonError,
  type PublicPigeon,
  type SendResult,
  type Template,
  type TemplatePage,
} from '../src/index.js';
import { BASE, mockPigeonApi, clientOptions as options, requestId, uuid } from './msw-server.js';

const { server, route } = mockPigeonApi();

const pigeon = () => new Pigeon({ apiKey: 'sk_test', ...options });

const now = '2025-01-01T00:00:00.000Z';

const sent: SendResult = {
  emails: [{ contact: { id: uuid(1), email: 'ada@example.com' }, email: uuid(11) }],
  skipped: [{ contact: { id: uuid(2), email: 'bob@example.com' }, reason: 'unsubscribed' }],
  warnings: [],
  timestamp: now,
};

const template = (n: number): Template => ({
  id: uuid(n),
  name: `Template ${n}`,
  description: null,
  subject: 'Hello {{name}}',
  body: '<p>Hi {{name}}</p>',
  from: 'news@example.com',
  fromName: 'News',
  replyTo: null,
  type: 'MARKETING',
  projectId: uuid(100),
  createdAt: now,
  updatedAt: now,
});

const domain: Domain = {
  id: uuid(50),
  domain: 'example.com',
  status: 'pending',
  verifiedAt: null,
  lastCheckedAt: null,
  dkimSelector: 'pigeon',
  records: [
    {
      type: 'TXT',
      name: 'pigeon._domainkey.example.com',
      value: 'v=DKIM1; k=rsa; p=MIIB',
      purpose: 'dkim',
      required: true,
      status: 'unchecked',
    },
  ],
  note: null,
  createdAt: now,
};

const envelope = (status: number, code: string, extra: Record<string, unknown> = {}) =>
  HttpResponse.json(
    { success: false, error: { code, message: `${code} happened`, statusCode: status, requestId, ...extra } },
    { status },
  );

const keys = (requests: Request[]) => requests.map((r) => r.headers.get('idempotency-key'));

describe('emails.send', () => {
  it('unwraps the success envelope, sends the body and an Idempotency-Key', async () => {
    const requests = route('post', '/v1/send', () => HttpResponse.json({ success: true, data: sent }));
    const body = { to: ['ada@example.com', 'bob@example.com'], template: uuid(3), data: { plan: 'pro' } };
    const result = await pigeon().emails.send(body);
    expectTypeOf(result).toEqualTypeOf<SendResult>();
    expect(result).toEqual(sent);
    expect(await requests[0]?.json()).toEqual(body);
    expect(requests[0]?.headers.get('authorization')).toBe('Bearer sk_test');
    expect(requests[0]?.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('retries a 503 with the same key, then returns the 200 result', async () => {
    const requests = route('post', '/v1/send', (_, n) =>
      n === 0 ? envelope(503, 'SERVICE_UNAVAILABLE') : HttpResponse.json({ success: true, data: sent }),
    );
    await expect(pigeon().emails.send({ to: 'ada@example.com', subject: 'Hi', body: 'Hello' })).resolves.toEqual(sent);
    expect(requests).toHaveLength(2);
    const [first, second] = keys(requests);
    expect(first).toBeTruthy();
    expect(second).toBe(first);
  });

  it('uses a caller-given key, and a new key for each separate call', async () => {
    const requests = route('post', '/v1/send', () => HttpResponse.json({ success: true, data: sent }));
    const client = pigeon();
    const body = { to: 'ada@example.com', subject: 'Hi', body: 'Hello' };
    await client.emails.send(body, { idempotencyKey: 'order-42-receipt' });
    await client.emails.send(body);
    await client.emails.send(body);
    const [given, second, third] = keys(requests);
    expect(given).toBe('order-42-receipt');
    expect(second).not.toBe(third);
  });

  it('turns a 403 DOMAIN_NOT_VERIFIED into a PigeonError with its details, without retrying', async () => {
    // The server's shape: status 403 with code INTERNAL_SERVER_ERROR; the status decides (no retry).
    const requests = route('post', '/v1/send', () =>
      envelope(403, 'INTERNAL_SERVER_ERROR', {
        message: 'The sender domain example.com is not verified',
        details: { reason: 'DOMAIN_NOT_VERIFIED', domain: 'example.com' },
        suggestion: 'Publish the DNS records, then verify the domain',
      }),
    );
    const error = await pigeon()
      .emails.send({ to: 'ada@example.com', subject: 'Hi', body: 'Hello', from: 'news@example.com' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({
      status: 403,
      code: 'INTERNAL_SERVER_ERROR',
      message: 'The sender domain example.com is not verified',
      requestId,
      details: { reason: 'DOMAIN_NOT_VERIFIED', domain: 'example.com' },
      suggestion: 'Publish the DNS records, then verify the domain',
    });
    expect(requests).toHaveLength(1);
  });
});

describe('templates', () => {
  /** Seven templates in pages of three: pages 1 and 2 full, page 3 with one. */
  function threePages() {
    const all = [1, 2, 3, 4, 5, 6, 7].map(template);
    return route('get', '/templates', (request) => {
      const page = Number(new URL(request.url).searchParams.get('page') ?? '1');
      const body: TemplatePage = {
        data: all.slice((page - 1) * 3, page * 3),
        page,
        pageSize: 3,
        total: all.length,
        totalPages: 3,
      };
      return HttpResponse.json(body);
    });
  }

  it('list returns one typed page and passes the query', async () => {
    const requests = threePages();
    const page = await pigeon().templates.list({ page: 2, pageSize: 3, type: 'MARKETING', sort: 'name', dir: 'asc' });
    expectTypeOf(page).toEqualTypeOf<TemplatePage>();
    expect(page).toMatchObject({ page: 2, totalPages: 3, total: 7 });
    expect(page.data.map((t) => t.id)).toEqual([uuid(4), uuid(5), uuid(6)]);
    expect(Object.fromEntries(new URL(requests[0]?.url ?? '').searchParams)).toEqual({
      page: '2',
      pageSize: '3',
      type: 'MARKETING',
      sort: 'name',
      dir: 'asc',
    });
  });

  it('all iterates across 3 pages, following page until totalPages', async () => {
    const requests = threePages();
    const iterator = pigeon().templates.all({ pageSize: 3, search: 'news' });
    expect(requests).toHaveLength(0); // lazy: nothing is fetched before iteration
    const seen: Template[] = [];
    for await (const t of iterator) {
      expectTypeOf(t).toEqualTypeOf<Template>();
      seen.push(t);
    }
    expect(seen.map((t) => t.id)).toEqual([1, 2, 3, 4, 5, 6, 7].map(uuid));
    expect(requests.map((r) => Object.fromEntries(new URL(r.url).searchParams))).toEqual([
      { pageSize: '3', search: 'news', page: '1' },
      { pageSize: '3', search: 'news', page: '2' },
      { pageSize: '3', search: 'news', page: '3' },
    ]);
  });

  it('all stops on an empty page and when the loop breaks early', async () => {
    const empty = route('get', '/templates', () =>
      HttpResponse.json({ data: [], page: 1, pageSize: 20, total: 0, totalPages: 0 }),
    );
    for await (const _ of pigeon().templates.all()) throw new Error('no templates expected');
    expect(empty).toHaveLength(1);

    server.resetHandlers();
    const requests = threePages();
    for await (const t of pigeon().templates.all({ pageSize: 3 })) {
      if (t.id === uuid(2)) break;
    }
    expect(requests).toHaveLength(1);
  });

  it('create, get, update, duplicate, usage and delete hit their routes', async () => {
    const created = route('post', '/templates', () => HttpResponse.json(template(1), { status: 201 }));
    const got = route('get', '/templates/:id', () => HttpResponse.json(template(1)));
    const patched = route('patch', '/templates/:id', () => HttpResponse.json({ ...template(1), name: 'Renamed' }));
    const copied = route('post', '/templates/:id/duplicate', () => HttpResponse.json(template(2), { status: 201 }));
    const usage = { campaigns: [{ id: 'c1', name: 'Launch' }], workflowSteps: [] };
    const used = route('get', '/templates/:id/usage', () => HttpResponse.json(usage));
    const deleted = route('delete', '/templates/:id', () => new HttpResponse(null, { status: 204 }));
    const client = pigeon();

    const fields = { name: 'Welcome', subject: 'Hi {{name}}', body: '<p>Hi</p>', from: 'news@example.com' };
    await expect(client.templates.create(fields)).resolves.toEqual(template(1));
    expect(await created[0]?.json()).toEqual(fields);
    await expect(client.templates.get(uuid(1))).resolves.toEqual(template(1));
    expect(got[0]?.url).toBe(`${BASE}/templates/${uuid(1)}`);
    await expect(client.templates.update(uuid(1), { name: 'Renamed' })).resolves.toMatchObject({ name: 'Renamed' });
    expect(await patched[0]?.json()).toEqual({ name: 'Renamed' });
    await expect(client.templates.duplicate(uuid(1))).resolves.toMatchObject({ id: uuid(2) });
    expect(copied[0]?.url).toBe(`${BASE}/templates/${uuid(1)}/duplicate`);
    await expect(client.templates.usage(uuid(1))).resolves.toEqual(usage);
    expect(used).toHaveLength(1);
    const removed = client.templates.delete(uuid(1));
    expectTypeOf(removed).toEqualTypeOf<Promise<void>>();
    await expect(removed).resolves.toBeUndefined();
    expect(deleted[0]?.method).toBe('DELETE');
    expect(deleted[0]?.url).toBe(`${BASE}/templates/${uuid(1)}`);
  });
});

describe('domains', () => {
  it('create sends { domain } and returns the domain with its DNS records', async () => {
    const requests = route('post', '/domains', () => HttpResponse.json(domain, { status: 201 }));
    const created = await pigeon().domains.create('example.com');
    expectTypeOf(created).toEqualTypeOf<Domain>();
    expect(created.records[0]).toMatchObject({ purpose: 'dkim', required: true });
    expect(await requests[0]?.json()).toEqual({ domain: 'example.com' });
  });

  it('list builds /domains/project/<id> with the id URL-encoded', async () => {
    const requests = route('get', '/domains/project/:projectId', () => HttpResponse.json([domain]));
    const client = pigeon();
    await expect(client.domains.list(uuid(100))).resolves.toEqual([domain]);
    await client.domains.list('a/b c?');
    expect(requests.map((r) => r.url)).toEqual([
      `${BASE}/domains/project/${uuid(100)}`,
      `${BASE}/domains/project/a%2Fb%20c%3F`,
    ]);
  });

  it('verify hits /domains/:id/verify; delete resolves void on 204', async () => {
    const verified = { ...domain, status: 'verified' as const, verifiedAt: now, lastCheckedAt: now };
    const checks = route('get', '/domains/:id/verify', () => HttpResponse.json(verified));
    const deleted = route('delete', '/domains/:id', () => new HttpResponse(null, { status: 204 }));
    const client = pigeon();
    await expect(client.domains.verify(uuid(50))).resolves.toEqual(verified);
    expect(checks[0]?.url).toBe(`${BASE}/domains/${uuid(50)}/verify`);
    await expect(client.domains.delete(uuid(50))).resolves.toBeUndefined();
    expect(deleted[0]?.url).toBe(`${BASE}/domains/${uuid(50)}`);
  });

  it('dmarc hits /domains/:id/dmarc with the range, when given, as query parameters', async () => {
    const counts = { messages: 3, dmarcPass: 2, dmarcFail: 1, dkimAligned: 2, spfAligned: 1 };
    const report = {
      domainId: uuid(50),
      domain: 'example.com',
      from: now,
      to: now,
      reportAddress: 'dmarc@bounces.example.com',
      policy: { p: 'none', sp: null, pct: null, adkim: 'r', aspf: 'r' },
      reports: 1,
      reporters: ['google.com'],
      totals: counts,
      sources: [],
      daily: [{ date: '2027-01-01', messages: 3, dmarcPass: 2, dmarcFail: 1 }],
    };
    const requests = route('get', '/domains/:id/dmarc', () => HttpResponse.json(report));
    const client = pigeon();
    const got = await client.domains.dmarc(uuid(50), { from: '2027-01-01T00:00:00Z' });
    expectTypeOf(got).toEqualTypeOf<DomainDmarc>();
    expect(got).toEqual(report);
    await client.domains.dmarc(uuid(50));
    expect(requests.map((r) => new URL(r.url).searchParams.get('from'))).toEqual(['2027-01-01T00:00:00Z', null]);
    expect(new URL(requests[1]?.url ?? '').pathname).toBe(`/domains/${uuid(50)}/dmarc`);
  });

  it('turns a 409 on delete into a PigeonError', async () => {
    route('delete', '/domains/:id', () => envelope(409, 'CONFLICT'));
    await expect(pigeon().domains.delete(uuid(50))).rejects.toMatchObject({ status: 409, code: 'CONFLICT' });
  });
});

describe('public-key client', () => {
  it('stays tracking-only: no emails, templates or domains', () => {
    const browser = createPigeon({ apiKey: 'pk_0123', ...options });
    expectTypeOf(browser).toEqualTypeOf<PublicPigeon>();
    expectTypeOf<PublicPigeon>().not.toHaveProperty('emails');
    expectTypeOf<PublicPigeon>().not.toHaveProperty('templates');
    expectTypeOf<PublicPigeon>().not.toHaveProperty('domains');
    expect(Object.keys(browser)).toEqual(['events']);
    const full = createPigeon({ apiKey: 'sk_0123', ...options });
    expect(Object.keys(full)).toEqual(expect.arrayContaining(['emails', 'templates', 'domains']));
  });
});
