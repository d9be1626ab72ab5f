import { HttpResponse } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { PigeonError, type Suppression, type SuppressionPage, type Verification } from '../src/index.js';
import { BASE, mockPigeonApi, uuid } from './msw-server.js';

const { route, pigeon } = mockPigeonApi();

const now = '2026-11-25T10:00:00.000Z';

const verification: Verification = {
  email: 'jane@gmial.com',
  valid: false,
  isDisposable: false,
  isAlias: false,
  isTypo: true,
  isPlusAddressed: false,
  isRandomInput: false,
  isPersonalEmail: false,
  domainExists: false,
  hasWebsite: false,
  hasMxRecords: false,
  suggestedEmail: 'jane@gmail.com',
  reasons: ['The domain gmial.com does not exist', 'Possible typo: did you mean jane@gmail.com?'],
};

const suppression = (n: number): Suppression => ({
  id: uuid(n),
  email: `user${n}@example.com`,
  reason: n % 2 ? 'hard_bounce' : 'complaint',
  detail: n % 2 ? 'smtp; 550 5.1.1 user unknown' : 'abuse',
  emailId: uuid(1000 + n),
  createdAt: now,
});

describe('verify', () => {
  it('POSTs the address to /v1/verify and resolves with the result inside `data`', async () => {
    const requests = route('post', '/v1/verify', () => HttpResponse.json({ success: true, data: verification }));
    const result = await pigeon().verify('jane@gmial.com');
    expectTypeOf(result).toEqualTypeOf<Verification>();
    expect(result).toEqual(verification);
    expect(await requests[0]?.json()).toEqual({ email: 'jane@gmial.com' });
    expect(requests[0]?.headers.get('authorization')).toBe('Bearer sk_test');
  });

  it('rejects with the PigeonError of a 422', async () => {
    route('post', '/v1/verify', () =>
      HttpResponse.json(
        {
          success: false,
          error: {
            code: 'VALIDATION_ERROR',
            message: 'Request validation failed',
            statusCode: 422,
            requestId: uuid(9),
          },
          timestamp: now,
        },
        { status: 422 },
      ),
    );
    const err = await pigeon()
      .verify('nope')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PigeonError);
    expect(err).toMatchObject({ code: 'VALIDATION_ERROR', status: 422 });
  });
});

describe('suppressions', () => {
  it('list passes the query; all follows cursors; delete hits the id', async () => {
    const pages: SuppressionPage[] = [
      { data: [suppression(3), suppression(2)], cursor: 'c1', hasMore: true, total: 3 },
      { data: [suppression(1)], cursor: null, hasMore: false, total: 0 },
    ];
    const listed = route('get', '/suppressions', (_req, n) => HttpResponse.json(pages[n]));
    const deleted = route('delete', '/suppressions/:id', () => new HttpResponse(null, { status: 204 }));
    const client = pigeon();

    const first = await client.suppressions.list({ email: 'user3@example.com', limit: 2 });
    expectTypeOf(first).toEqualTypeOf<SuppressionPage>();
    expect(Object.fromEntries(new URL(listed[0]?.url ?? '').searchParams)).toEqual({
      email: 'user3@example.com',
      limit: '2',
    });

    const seen: string[] = [];
    for await (const s of client.suppressions.all({ limit: 2 })) seen.push(s.email);
    expect(seen).toEqual(['user1@example.com']);
    expect(new URL(listed[1]?.url ?? '').searchParams.get('cursor')).toBe(null);

    await expect(client.suppressions.delete(uuid(3))).resolves.toBeUndefined();
    expect(deleted[0]?.url).toBe(`${BASE}/suppressions/${uuid(3)}`);
    expect(deleted[0]?.method).toBe('DELETE');
  });
});
