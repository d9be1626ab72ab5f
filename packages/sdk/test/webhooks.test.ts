import { createHmac, randomBytes } from 'node:crypto';
import { HttpResponse } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type EmailDetail,
  type Job,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEvent,
  WebhookVerificationError,
  webhooks,
} from '../src/index.js';
import { mockPigeonApi } from './msw-server.js';

const { route, pigeon } = mockPigeonApi();
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const otherSecret = `whsec_${randomBytes(32).toString('base64')}`;
const sign = (key: string, id: string, ts: number, body: string) =>
  `v1,${createHmac('sha256', Buffer.from(key.slice(6), 'base64'))
    .update(`${id}.${ts}.${body}`)
    .digest('base64')}`;

const body = JSON.stringify({
  type: 'email.click',
  timestamp: '2026-11-25T10:00:00.000Z',
  data: { emailId: '0190c2a4-7b7e-7cc0-9a3f-000000000001', link: 'https://example.com' },
});
const now = () => new Date('2026-11-25T10:00:30.000Z');
const ts = Math.floor(now().getTime() / 1000);
const headersFor = (signature: string, timestamp = ts) => ({
  'webhook-id': 'msg_1',
  'webhook-timestamp': String(timestamp),
  'webhook-signature': signature,
});

describe('webhooks.verify', () => {
  it('returns the typed event for a genuine request, given as text, bytes, Node headers or fetch Headers', async () => {
    const headers = headersFor(sign(secret, 'msg_1', ts, body));
    const event = await webhooks.verify(body, headers, secret, { now });
    expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    expect(event).toMatchObject({ type: 'email.click', data: { link: 'https://example.com' } });
    await expect(webhooks.verify(Buffer.from(body), new Headers(headers), secret, { now })).resolves.toEqual(event);
    const nodeStyle = { ...headers, 'Webhook-Id': undefined, 'webhook-signature': [headers['webhook-signature']] };
    await expect(webhooks.verify(body, nodeStyle, secret, { now })).resolves.toEqual(event);
  });

  it('returns a union narrowed by type: the events of Pigeon itself, and the tracked events it is told the names of', async () => {
    const tracked = JSON.stringify({
      type: 'order.created',
      timestamp: '2026-11-25T10:00:00.000Z',
      data: { contact: { id: '0190c2a4-7b7e-7cc0-9a3f-000000000002', email: 'a@example.com' }, data: { total: 42 } },
    });
    const seen: unknown[] = [];
    for (const payload of [body, tracked]) {
      const event = await webhooks.verify<'order.created'>(
        payload,
        headersFor(sign(secret, 'msg_1', ts, payload)),
        secret,
        { now },
      );
      switch (event.type) {
        case 'email.click':
          expectTypeOf(event.data.link).toEqualTypeOf<string>();
          seen.push(event.data.link);
          break;
        case 'order.created':
          expectTypeOf(event.data.data).toEqualTypeOf<Record<string, unknown>>();
          seen.push(event.data.data.total);
          break;
        case 'email.bounce':
          expectTypeOf(event.data.bounceType).toBeString();
          break;
        default:
          // What is left of Pigeon's own events is still narrowed by `type`.
          if (event.type === 'segment.trial.entry') expectTypeOf(event.data.segment.slug).toBeString();
      }
    }
    expect(seen).toEqual(['https://example.com', 42]);
  });

  it('accepts any one matching signature (a rotation sends two)', async () => {
    const both = `${sign(otherSecret, 'msg_1', ts, body)} ${sign(secret, 'msg_1', ts, body)}`;
    await expect(webhooks.verify(body, headersFor(both), secret, { now })).resolves.toBeTruthy();
    await expect(webhooks.verify(body, headersFor(both), otherSecret, { now })).resolves.toBeTruthy();
  });

  it.each([
    ['a changed body', `${body} `, headersFor(sign(secret, 'msg_1', ts, body)), 'INVALID_SIGNATURE'],
    ['another secret', body, headersFor(sign(otherSecret, 'msg_1', ts, body)), 'INVALID_SIGNATURE'],
    [
      'another id',
      body,
      { ...headersFor(sign(secret, 'msg_1', ts, body)), 'webhook-id': 'msg_2' },
      'INVALID_SIGNATURE',
    ],
    [
      'an old timestamp',
      body,
      headersFor(sign(secret, 'msg_1', ts - 600, body), ts - 600),
      'TIMESTAMP_OUT_OF_TOLERANCE',
    ],
    [
      'a future timestamp',
      body,
      headersFor(sign(secret, 'msg_1', ts + 600, body), ts + 600),
      'TIMESTAMP_OUT_OF_TOLERANCE',
    ],
    ['no signature', body, { 'webhook-id': 'msg_1', 'webhook-timestamp': String(ts) }, 'MISSING_HEADERS'],
    ['a bad timestamp', body, { ...headersFor('v1,x'), 'webhook-timestamp': 'soon' }, 'INVALID_TIMESTAMP'],
    ['a body that is not JSON', 'hello', headersFor(sign(secret, 'msg_1', ts, 'hello')), 'INVALID_PAYLOAD'],
  ])('refuses %s with a typed error', async (_what, raw, headers, reason) => {
    const error = await webhooks.verify(raw, headers, secret, { now }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error).toMatchObject({ reason });
  });

  it('refuses a secret that is not whsec_ + base64', async () => {
    await expect(webhooks.verify(body, headersFor('v1,x'), 'whsec_***', { now })).rejects.toMatchObject({
      reason: 'INVALID_SECRET',
    });
  });
});

const id = '0190c2a4-7b7e-7cc0-9a3f-000000000002';
const at = '2026-11-25T10:00:00.000Z';

describe('resources', () => {
  it('manages endpoints, reads and replays deliveries, and reads and cancels emails', async () => {
    const endpoint: WebhookEndpoint = {
      id,
      url: 'https://example.com/hook',
      description: null,
      eventTypes: ['email.*'],
      enabled: true,
      disabledReason: null,
      failingSince: null,
      secret,
      previousSecretExpiresAt: null,
      createdAt: at,
      updatedAt: at,
    };
    const delivery: WebhookDelivery = {
      id,
      webhookId: 'msg_1',
      eventType: 'webhook.test',
      status: 'SUCCEEDED',
      attemptCount: 1,
      nextAttemptAt: null,
      createdAt: at,
      payload: { type: 'webhook.test', timestamp: at, data: { endpointId: id, message: 'hi' } },
      attempts: [{ at, trigger: 'SCHEDULED', statusCode: 200, durationMs: 3, response: 'ok', error: null }],
    };
    const created = route('post', '/webhook-endpoints', () => HttpResponse.json(endpoint, { status: 201 }));
    route('get', '/webhook-endpoints', () => HttpResponse.json({ data: [endpoint] }));
    const rotated = route('post', `/webhook-endpoints/${id}/rotate-secret`, () => HttpResponse.json(endpoint));
    const pages = route('get', `/webhook-endpoints/${id}/deliveries`, (request) =>
      HttpResponse.json(
        new URL(request.url).searchParams.get('cursor')
          ? { data: [delivery], cursor: null, hasMore: false, total: 0 }
          : { data: [delivery], cursor: 'c2', hasMore: true, total: 2 },
      ),
    );
    route('post', `/webhook-endpoints/${id}/deliveries/${id}/replay`, () =>
      HttpResponse.json(delivery, { status: 202 }),
    );
    const detail: EmailDetail = {
      id,
      status: 'SCHEDULED',
      to: 'a@example.com',
      toName: null,
      from: 'b@example.com',
      fromName: null,
      subject: 'Hi',
      source: 'TRANSACTIONAL',
      cc: [],
      bcc: [],
      replyTo: null,
      tags: {},
      attempts: 0,
      content: null,
      contactId: id,
      templateId: null,
      campaignId: null,
      workflowId: null,
      workflowExecutionId: null,
      relay: null,
      sendAt: at,
      sentAt: null,
      deliveredAt: null,
      openedAt: null,
      clickedAt: null,
      bouncedAt: null,
      complainedAt: null,
      opens: 0,
      clicks: 0,
      lastError: null,
      contentCleared: false,
      createdAt: at,
      timeline: [{ type: 'email.scheduled', at, data: { sendAt: at } }],
    };
    route('get', `/emails/${id}`, () => HttpResponse.json(detail));
    route('post', `/emails/${id}/cancel`, () =>
      HttpResponse.json({ ...detail, status: 'CANCELLED', timeline: undefined }),
    );

    const client = pigeon();
    expect(await client.webhooks.endpoints.create({ url: endpoint.url, eventTypes: ['email.*'] })).toEqual(endpoint);
    expect(await created[0]?.json()).toEqual({ url: endpoint.url, eventTypes: ['email.*'] });
    expect(await client.webhooks.endpoints.list()).toEqual([endpoint]);
    await client.webhooks.endpoints.rotateSecret(id, 2);
    expect(await rotated[0]?.json()).toEqual({ overlapHours: 2 });
    const all = [];
    for await (const d of client.webhooks.deliveries.all(id, { status: 'SUCCEEDED' })) all.push(d);
    expect(all).toHaveLength(2);
    expect(new URL(pages[1]?.url ?? '').searchParams.get('status')).toBe('SUCCEEDED');
    expect(await client.webhooks.deliveries.replay(id, id)).toEqual(delivery);
    expect((await client.emails.get(id)).timeline[0]?.type).toBe('email.scheduled');
    expect((await client.emails.cancel(id)).status).toBe('CANCELLED');
    expect(client.webhooks.verify).toBe(webhooks.verify);
  });

  it('recovers failed deliveries of a time range and polls the job until it is done', async () => {
    const jobId = '0190c2a4-7b7e-7cc0-9a3f-0000000000aa';
    const job = (status: Job['status'], processed: number): Job => ({
      id: jobId,
      kind: 'recover_deliveries',
      status,
      progress: status === 'completed' ? 100 : 50,
      total: 2_000,
      processed,
      created: 0,
      updated: processed / 2,
      skipped: processed / 2,
      errors: [],
      error: null,
      createdAt: at,
      startedAt: at,
      finishedAt: status === 'completed' ? at : null,
    });
    const asked = route('post', `/webhook-endpoints/${id}/recoveries`, () =>
      HttpResponse.json({ jobId }, { status: 202 }),
    );
    route('get', `/webhook-endpoints/${id}/recoveries/${jobId}`, (_request, n) =>
      HttpResponse.json(n === 0 ? job('running', 1_000) : job('completed', 2_000)),
    );
    const client = pigeon();
    const range = { after: '2026-11-20T00:00:00Z', before: '2026-11-23T00:00:00Z' };
    expect(await client.webhooks.deliveries.recover(id, range)).toEqual({ jobId });
    expect(await asked[0]?.json()).toEqual(range);
    const seen: number[] = [];
    const done = await client.webhooks.deliveries.waitForRecovery(id, jobId, {
      intervalMs: 1,
      onProgress: (j) => seen.push(j.processed),
    });
    expect(done).toMatchObject({ status: 'completed', updated: 1_000, skipped: 1_000 });
    expect(seen).toEqual([1_000, 2_000]);
  });
});
