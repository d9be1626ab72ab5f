import { createHmac } from 'node:crypto';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newProject, signUp } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { loadConfig } from '../../config/index.js';
import { queryRows, runStatement, sql } from '../../db/query.js';
import { setProjectDisabled } from '../projects/service.js';

/** Stripe's API is unreachable from here: msw answers for api.stripe.com, as Stripe documents it. */
const WEBHOOK_SECRET = 'whsec_test_0123456789abcdef';
const PRICE = 'price_pigeon_monthly';
const stripeCalls: Array<{ method: string; path: string; form: URLSearchParams; query: URLSearchParams }> = [];
const stripeApi = setupServer(
  http.post('https://api.stripe.com/v1/customers', async ({ request }) => {
    const form = record(request, await request.text());
    return HttpResponse.json({ id: customerOf(form.get('metadata[pigeonProjectId]') ?? ''), object: 'customer' });
  }),
  http.post('https://api.stripe.com/v1/checkout/sessions', async ({ request }) => {
    record(request, await request.text());
    return HttpResponse.json({
      id: 'cs_test_1',
      object: 'checkout.session',
      url: 'https://checkout.stripe.com/c/pay/cs_test_1',
    });
  }),
  http.post('https://api.stripe.com/v1/billing_portal/sessions', async ({ request }) => {
    record(request, await request.text());
    return HttpResponse.json({
      id: 'bps_test_1',
      object: 'billing_portal.session',
      url: 'https://billing.stripe.com/p/session/test_1',
    });
  }),
  http.get('https://api.stripe.com/v1/invoices', ({ request }) => {
    record(request, '');
    return HttpResponse.json({
      object: 'list',
      url: '/v1/invoices',
      has_more: false,
      data: [
        {
          id: 'in_test_1',
          object: 'invoice',
          number: 'PIG-0001',
          status: 'paid',
          currency: 'eur',
          amount_due: 2900,
          amount_paid: 2900,
          created: 1_764_000_000,
          hosted_invoice_url: 'https://invoice.stripe.com/i/test_1',
          invoice_pdf: 'https://pay.stripe.com/invoice/test_1/pdf',
        },
      ],
    });
  }),
);

function record(request: Request, body: string) {
  const url = new URL(request.url);
  const form = new URLSearchParams(body);
  stripeCalls.push({ method: request.method, path: url.pathname, form, query: url.searchParams });
  return form;
}

/** The customer Stripe creates for a project (one per project, as in Stripe). */
const customerOf = (projectId: string) => `cus_${projectId.replace(/-/g, '')}`;

let pigeon: TestPigeon;
beforeAll(async () => {
  stripeApi.listen({ onUnhandledRequest: 'bypass' });
  pigeon = await startTestPigeon({
    env: { STRIPE_SECRET_KEY: 'sk_test_pigeon', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_PRICE_ID: PRICE },
  });
});
afterEach(() => {
  stripeCalls.length = 0;
});
afterAll(async () => {
  await pigeon?.stop();
  stripeApi.close();
});

/** The `Stripe-Signature` header as Stripe makes it: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.payload">`. */
function stripeSignature(payload: string, { secret = WEBHOOK_SECRET, at = Date.now() } = {}) {
  const t = Math.floor(at / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex');
  return `t=${t},v1=${v1}`;
}

let eventCounter = 0;
const stripeEvent = (type: string, object: Record<string, unknown>) =>
  JSON.stringify({
    id: `evt_test_${process.pid}_${++eventCounter}`,
    object: 'event',
    api_version: '2025-01-01',
    created: Math.floor(Date.now() / 1000),
    type,
    data: { object },
  });

// Stripe's webhook: a raw body, byte for byte what the signature covers, so not through the typed client.
const deliver = (payload: string, signature: string | undefined, p: TestPigeon = pigeon) =>
  // untyped: raw body (the signed payload, byte for byte)
  p.request('POST', '/webhooks/incoming/stripe', {
    rawBody: payload,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      ...(signature ? { 'stripe-signature': signature } : {}),
    },
  });

/** The billing routes of a project, as `headers` see them (on `p`, the Stripe-enabled Pigeon unless told). */
const billing = (headers: Record<string, string>, p: TestPigeon = pigeon) => api(p, headers).billing;
const ofProject = (projectId: string) => ({ params: { id: projectId } });

describe('Stripe configuration', () => {
  it('is on only with all three settings; half a setup is a configuration error', () => {
    const base = { PIGEON_DATA_DIR: pigeon.dataDir };
    expect(loadConfig(base).billing.stripe).toBeUndefined();
    expect(() => loadConfig({ ...base, STRIPE_SECRET_KEY: 'sk_test_x' })).toThrow(/STRIPE_WEBHOOK_SECRET/);
    expect(() => loadConfig({ ...base, STRIPE_SECRET_KEY: 'pk_test_x' })).toThrow(/STRIPE_SECRET_KEY/);
    expect(
      loadConfig({ ...base, STRIPE_SECRET_KEY: 'sk_x', STRIPE_WEBHOOK_SECRET: 'whsec_x', STRIPE_PRICE_ID: 'price_x' })
        .billing.stripe,
    ).toEqual({ secretKey: 'sk_x', webhookSecret: 'whsec_x', priceId: 'price_x' });
  });

  it('GET /config says billing is on', async () => {
    const res = await api(pigeon).system.config();
    expect(bodyOf(res, 200).billingEnabled).toBe(true);
  });
});

describe('checkout, portal and invoices', () => {
  it('checkout creates the customer once and a subscription session for the configured price', async () => {
    const s = await newProject(pigeon);
    const res = await billing(s.auth).checkout({
      ...ofProject(s.project.id),
      body: { successUrl: 'https://app.example/billing/done' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ id: 'cs_test_1', url: 'https://checkout.stripe.com/c/pay/cs_test_1' });
    const customer = stripeCalls.find((c) => c.path === '/v1/customers');
    expect(customer?.form.get('metadata[pigeonProjectId]')).toBe(s.project.id);
    const session = stripeCalls.find((c) => c.path === '/v1/checkout/sessions');
    expect(session?.form.get('mode')).toBe('subscription');
    expect(session?.form.get('customer')).toBe(customerOf(s.project.id));
    expect(session?.form.get('client_reference_id')).toBe(s.project.id);
    expect(session?.form.get('line_items[0][price]')).toBe(PRICE);
    expect(session?.form.get('success_url')).toBe('https://app.example/billing/done');
    expect(session?.form.get('cancel_url')).toBe(`${pigeon.deps.config.http.publicUrl}/?billing=cancelled`);

    stripeCalls.length = 0;
    const again = await billing(s.auth).checkout({ ...ofProject(s.project.id), body: {} });
    expect(again.status).toBe(200);
    expect(stripeCalls.map((c) => c.path)).toEqual(['/v1/checkout/sessions']);
  });

  it('the portal needs a customer first (409); invoices are empty until then, then read from Stripe', async () => {
    const s = await newProject(pigeon);
    const client = billing(s.auth);
    const project = ofProject(s.project.id);
    expectEnvelope(await client.portal(project), 409, 'CONFLICT');
    const none = await client.invoices(project);
    expect(none.body).toEqual({ data: [] });
    expect(stripeCalls).toHaveLength(0);

    await client.checkout({ ...project, body: {} });
    const portal = await client.portal(project);
    expect(portal.status, JSON.stringify(portal.body)).toBe(200);
    expect(bodyOf(portal, 200).url).toBe('https://billing.stripe.com/p/session/test_1');
    expect(stripeCalls.find((c) => c.path === '/v1/billing_portal/sessions')?.form.get('customer')).toBe(
      customerOf(s.project.id),
    );

    await setProjectDisabled(pigeon.deps.db.pool, s.project.id, 'unpaid');
    expectEnvelope(await client.portal(project), 403, 'PROJECT_DISABLED');
    const invoices = await client.invoices(project); // a read: a disabled project still sees its invoices
    expect(invoices.status, JSON.stringify(invoices.body)).toBe(200);
    expect(stripeCalls.find((c) => c.path === '/v1/invoices')?.query.get('customer')).toBe(customerOf(s.project.id));
    expect(bodyOf(invoices, 200).data).toEqual([
      {
        id: 'in_test_1',
        number: 'PIG-0001',
        status: 'paid',
        currency: 'eur',
        amountDue: 2900,
        amountPaid: 2900,
        createdAt: new Date(1_764_000_000 * 1000).toISOString(),
        hostedInvoiceUrl: 'https://invoice.stripe.com/i/test_1',
        pdfUrl: 'https://pay.stripe.com/invoice/test_1/pdf',
      },
    ]);
  });

  it('a MEMBER cannot start a checkout, another project is 404, and a Stripe failure is a 502', async () => {
    const s = await newProject(pigeon);
    const member = await signUp(pigeon);
    await api(pigeon, { cookie: s.owner.cookie }).projects.inviteMember({
      ...ofProject(s.project.id),
      body: { email: member.user.email, role: 'MEMBER' },
    });
    expectEnvelope(
      await billing({ cookie: member.cookie }).checkout({ ...ofProject(s.project.id), body: {} }),
      403,
      'INSUFFICIENT_ROLE',
    );
    const other = await newProject(pigeon);
    expectEnvelope(await billing(s.auth).checkout({ ...ofProject(other.project.id), body: {} }), 404, 'NOT_FOUND');
    expect(stripeCalls).toHaveLength(0);

    stripeApi.use(
      http.post('https://api.stripe.com/v1/checkout/sessions', () =>
        HttpResponse.json(
          { error: { type: 'invalid_request_error', message: 'No such price: price_pigeon_monthly' } },
          { status: 400 },
        ),
      ),
    );
    try {
      const failed = await billing(s.auth).checkout({ ...ofProject(s.project.id), body: {} });
      const error = expectEnvelope(failed, 502, 'UPSTREAM_ERROR');
      expect(error.message).toContain('No such price');
    } finally {
      stripeApi.resetHandlers();
    }
  });
});

describe('POST /webhooks/incoming/stripe', () => {
  const account = async (projectId: string) =>
    (
      await queryRows(
        pigeon.deps.db.pool,
        sql`SELECT stripe_customer_id, subscription_id, subscription_status, current_period_end FROM billing_accounts WHERE project_id = ${projectId}`,
      )
    )[0];

  it('applies a signed checkout and subscription update; consumption shows the subscription', async () => {
    const s = await newProject(pigeon);
    const completed = stripeEvent('checkout.session.completed', {
      id: 'cs_test_9',
      object: 'checkout.session',
      client_reference_id: s.project.id,
      customer: `cus_${s.project.id.slice(0, 8)}`,
      subscription: 'sub_test_9',
      status: 'complete',
    });
    const res = await deliver(completed, stripeSignature(completed));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ received: true, type: 'checkout.session.completed' });
    expect(await account(s.project.id)).toMatchObject({
      stripe_customer_id: `cus_${s.project.id.slice(0, 8)}`,
      subscription_id: 'sub_test_9',
      subscription_status: 'active',
    });

    const periodEnd = Math.floor(Date.now() / 1000) + 30 * 86400;
    const updated = stripeEvent('customer.subscription.updated', {
      id: 'sub_test_9',
      object: 'subscription',
      customer: `cus_${s.project.id.slice(0, 8)}`,
      status: 'past_due',
      items: { object: 'list', data: [{ id: 'si_1', object: 'subscription_item', current_period_end: periodEnd }] },
    });
    expect((await deliver(updated, stripeSignature(updated))).status).toBe(200);
    const usage = await billing(s.auth).consumption(ofProject(s.project.id));
    expect(bodyOf(usage, 200).subscription).toEqual({
      status: 'past_due',
      currentPeriodEnd: new Date(periodEnd * 1000).toISOString(),
    });
  });

  it('refuses forged, tampered, stale, unsigned and replayed payloads, changing nothing', async () => {
    const s = await newProject(pigeon);
    const payload = stripeEvent('checkout.session.completed', {
      id: 'cs_test_10',
      object: 'checkout.session',
      client_reference_id: s.project.id,
      customer: 'cus_forged',
      subscription: 'sub_forged',
      status: 'complete',
    });
    const forged = await deliver(payload, stripeSignature(payload, { secret: 'whsec_someone_else' }));
    expectEnvelope(forged, 400, 'INVALID_SIGNATURE');
    const tampered = await deliver(payload.replace('cus_forged', 'cus_other'), stripeSignature(payload));
    expectEnvelope(tampered, 400, 'INVALID_SIGNATURE');
    const stale = await deliver(payload, stripeSignature(payload, { at: Date.now() - 10 * 60_000 }));
    expect(expectEnvelope(stale, 400, 'INVALID_SIGNATURE').message).toMatch(/tolerance/i);
    expectEnvelope(await deliver(payload, undefined), 400, 'INVALID_SIGNATURE');
    expect(await account(s.project.id)).toBeUndefined();

    const signature = stripeSignature(payload);
    expect((await deliver(payload, signature)).status).toBe(200);
    await runStatement(
      pigeon.deps.db.pool,
      sql`UPDATE billing_accounts SET subscription_status = ${'canceled'} WHERE project_id = ${s.project.id}`,
    );
    // The same signed delivery again, within the tolerance: refused, and it does not re-apply.
    const replay = await deliver(payload, signature);
    expect(expectEnvelope(replay, 409, 'CONFLICT').message).toContain('already processed');
    expect((await account(s.project.id))?.subscription_status).toBe('canceled');
  });
});

describe('without Stripe', () => {
  it('billing endpoints answer 404 BILLING_DISABLED and GET /config says billing is off; caps still work', async () => {
    const plain = await startTestPigeon({ databaseUrl: pigeon.deps.db.url });
    try {
      expect(bodyOf(await api(plain).system.config(), 200).billingEnabled).toBe(false);
      const s = await newProject(plain);
      const client = billing(s.auth, plain);
      const project = ofProject(s.project.id);
      for (const res of [
        await client.checkout({ ...project, body: {} }),
        await client.portal(project),
        await client.invoices(project),
      ]) {
        expect(expectEnvelope(res, 404, 'BILLING_DISABLED').suggestion).toContain('STRIPE_SECRET_KEY');
      }
      const payload = stripeEvent('checkout.session.completed', { id: 'cs_x', object: 'checkout.session' });
      expectEnvelope(await deliver(payload, stripeSignature(payload), plain), 404, 'BILLING_DISABLED');
      const usage = await client.consumption(project);
      expect(usage.status).toBe(200);
      expect(bodyOf(usage, 200).subscription).toBeNull();
      expect(stripeCalls).toHaveLength(0);
    } finally {
      await plain.stop();
    }
  });
});
