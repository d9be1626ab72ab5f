import { HttpResponse } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { type Billing, type BillingConsumption, type BillingLimits, PigeonError } from '../src/index.js';
import { mockPigeonApi, requestId } from './msw-server.js';

const { route, pigeon } = mockPigeonApi();

const projectId = '0190c2a4-7b7e-7cc0-9a3f-000000000001';
const limits: BillingLimits = { transactional: 1000, campaigns: null, workflows: 0 };

describe('pigeon.billing', () => {
  it('reads and sets the caps of the project in the path, with the secret key', async () => {
    const got = route('get', `/users/@me/projects/${projectId}/billing-limits`, () => HttpResponse.json(limits));
    const put = route('put', `/users/@me/projects/${projectId}/billing-limits`, async (req) =>
      HttpResponse.json({ ...limits, ...((await req.json()) as object) }),
    );
    expectTypeOf(pigeon().billing).toEqualTypeOf<Billing>();
    expect(await pigeon().billing.limits(projectId)).toEqual(limits);
    expect(await pigeon().billing.setLimits(projectId, { campaigns: 50_000 })).toEqual({
      ...limits,
      campaigns: 50_000,
    });
    expect(got[0]?.headers.get('authorization')).toBe('Bearer sk_test');
    expect(await put[0]?.json()).toEqual({ campaigns: 50_000 });
  });

  it('reads consumption; checkout, portal and invoices go to their paths', async () => {
    const usage: BillingConsumption = {
      periodStart: '2026-11-01T00:00:00.000Z',
      resetsAt: '2026-12-01T00:00:00.000Z',
      transactional: { used: 10, limit: 1000, remaining: 990 },
      campaigns: { used: 0, limit: null, remaining: null },
      workflows: { used: 0, limit: 0, remaining: 0 },
      subscription: null,
    };
    route('get', `/users/@me/projects/${projectId}/billing-consumption`, () => HttpResponse.json(usage));
    const checkout = route('post', `/users/@me/projects/${projectId}/checkout`, () =>
      HttpResponse.json({ id: 'cs_1', url: 'https://checkout.stripe.com/c/pay/cs_1' }),
    );
    route('post', `/users/@me/projects/${projectId}/billing-portal`, () =>
      HttpResponse.json({ id: 'bps_1', url: 'https://billing.stripe.com/p/session/1' }),
    );
    route('get', `/users/@me/projects/${projectId}/billing-invoices`, () => HttpResponse.json({ data: [] }));
    expect(await pigeon().billing.consumption(projectId)).toEqual(usage);
    expect((await pigeon().billing.checkout(projectId, { successUrl: 'https://app.example/ok' })).url).toContain(
      'checkout.stripe.com',
    );
    expect(await checkout[0]?.json()).toEqual({ successUrl: 'https://app.example/ok' });
    expect((await pigeon().billing.portal(projectId)).id).toBe('bps_1');
    expect(await pigeon().billing.invoices(projectId)).toEqual({ data: [] });
  });

  it('a 403 BILLING_LIMIT_EXCEEDED surfaces as a PigeonError with its details, not retried', async () => {
    const sends = route('post', '/v1/send', () =>
      HttpResponse.json(
        {
          success: false,
          error: {
            code: 'BILLING_LIMIT_EXCEEDED',
            message: 'The monthly transactional limit of 10 emails would be exceeded',
            statusCode: 403,
            requestId,
            details: {
              category: 'transactional',
              limit: 10,
              used: 10,
              remaining: 0,
              requested: 1,
              resetsAt: '2026-12-01T00:00:00.000Z',
            },
          },
          message: 'The monthly transactional limit of 10 emails would be exceeded',
          timestamp: '2026-11-25T10:00:00.000Z',
        },
        { status: 403 },
      ),
    );
    const error = await pigeon()
      .emails.send({ to: 'a@b.example', subject: 'Hi', body: '<p>Hi</p>', from: 'me@c.example' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({
      status: 403,
      code: 'BILLING_LIMIT_EXCEEDED',
      details: { resetsAt: '2026-12-01T00:00:00.000Z' },
    });
    expect(sends).toHaveLength(1);
  });
});
