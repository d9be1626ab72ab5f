import { HttpResponse } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { type ContactTopic, PigeonError, type Topic } from '../src/index.js';
import { mockPigeonApi, requestId, uuid } from './msw-server.js';

const { route, pigeon } = mockPigeonApi();

const now = '2026-12-07T10:00:00.000Z';

const topic = (overrides: Partial<Topic> = {}): Topic => ({
  id: uuid(1),
  name: 'Product news',
  description: null,
  defaultSubscription: 'OPT_IN',
  visibility: 'PUBLIC',
  createdAt: now,
  updatedAt: now,
  ...overrides,
});

const state = (overrides: Partial<ContactTopic> = {}): ContactTopic => ({
  topicId: uuid(1),
  name: 'Product news',
  visibility: 'PUBLIC',
  subscribed: true,
  chosen: false,
  ...overrides,
});

describe('topics', () => {
  it('create POSTs the body and resolves with the topic; list unwraps data', async () => {
    const created = route('post', '/topics', () => HttpResponse.json(topic(), { status: 201 }));
    const listed = route('get', '/topics', () => HttpResponse.json({ data: [topic(), topic({ id: uuid(2) })] }));
    const result = await pigeon().topics.create({ name: 'Product news', defaultSubscription: 'OPT_IN' });
    expectTypeOf(result).toEqualTypeOf<Topic>();
    expect(result).toEqual(topic());
    expect(await created[0]?.json()).toEqual({ name: 'Product news', defaultSubscription: 'OPT_IN' });
    const list = await pigeon().topics.list();
    expect(list.map((t) => t.id)).toEqual([uuid(1), uuid(2)]);
    expect(listed).toHaveLength(1);
  });

  it('update PATCHes, delete sends DELETE and resolves with nothing', async () => {
    const patched = route('patch', '/topics/:id', () => HttpResponse.json(topic({ visibility: 'HIDDEN' })));
    const deleted = route('delete', '/topics/:id', () => new HttpResponse(null, { status: 204 }));
    expect((await pigeon().topics.update(uuid(1), { visibility: 'HIDDEN' })).visibility).toBe('HIDDEN');
    expect(new URL(patched[0]?.url ?? '').pathname).toBe(`/topics/${uuid(1)}`);
    expect(await patched[0]?.json()).toEqual({ visibility: 'HIDDEN' });
    expect(await pigeon().topics.delete(uuid(1))).toBeUndefined();
    expect(deleted).toHaveLength(1);
  });

  it("ofContact GETs the contact's topics; setForContact PUTs the choices and unwraps every state", async () => {
    const contactId = uuid(50);
    route('get', '/contacts/:id/topics', () => HttpResponse.json({ data: [state()] }));
    const put = route('put', '/contacts/:id/topics', () =>
      HttpResponse.json({ data: [state({ subscribed: false, chosen: true })] }),
    );
    expect(await pigeon().topics.ofContact(contactId)).toEqual([state()]);
    const after = await pigeon().topics.setForContact(contactId, [{ topicId: uuid(1), subscribed: false }]);
    expectTypeOf(after).toEqualTypeOf<ContactTopic[]>();
    expect(after).toEqual([state({ subscribed: false, chosen: true })]);
    expect(new URL(put[0]?.url ?? '').pathname).toBe(`/contacts/${contactId}/topics`);
    expect(await put[0]?.json()).toEqual({ topics: [{ topicId: uuid(1), subscribed: false }] });
  });

  it('a 409 (a topic still in use) rejects with PigeonError carrying the code', async () => {
    route('delete', '/topics/:id', () =>
      HttpResponse.json(
        {
          success: false,
          message: 'The topic is still used by campaign "News"',
          error: {
            code: 'CONFLICT',
            message: 'The topic is still used by campaign "News"',
            statusCode: 409,
            requestId,
          },
          timestamp: now,
        },
        { status: 409 },
      ),
    );
    const error = await pigeon()
      .topics.delete(uuid(1))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({ status: 409, code: 'CONFLICT' });
  });
});
