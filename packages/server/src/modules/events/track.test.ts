import type { contract } from '@pigeon/contract';
import type { ClientInferRequest } from '@ts-rest/core';
import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';
import { eventNames, newProject, waitForJob } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { insertEvent } from '../../../test/fixtures/event-log.js';
import { expireIdempotencyKeys, insertIdempotencyKey } from '../../../test/fixtures/idempotency.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { until } from '../../../test/until.js';
import { queryRows, sql } from '../../db/query.js';
import { setProjectDisabled } from '../projects/service.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

const pk = (p: { publicKey: string }) => ({ authorization: `Bearer ${p.publicKey}` });

async function contactByEmail(auth: Record<string, string>, email: string) {
  const [contact] = bodyOf(await api(pigeon, auth).contacts.list({ query: { search: email } }), 200).data;
  assert(contact, `no contact ${email}`);
  return contact;
}

describe('POST /v1/track', () => {
  it("does not wait for a transaction holding a reference to the contact (a campaign's email being queued)", async () => {
    const { project } = await newProject(pigeon);
    const first = bodyOf(
      await api(pigeon, pk(project)).events.track({ body: { email: 'held@example.com', event: 'a' } }),
      200,
    );
    const client = await pigeon.deps.db.pool.connect();
    try {
      await client.query('BEGIN');
      // Uncommitted: the foreign-key check of this row holds FOR KEY SHARE on the contact.
      await insertEvent(client, { projectId: project.id, contactId: first.data.contact, name: 'held' });
      const track = api(pigeon, pk(project)).events.track({
        body: { email: 'held@example.com', event: 'b', data: { n: 1 } },
      });
      const waited = new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 10_000));
      const answer = await Promise.race([track, waited]);
      expect(answer === 'waited' ? answer : answer.status).toBe(200);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('creates an unknown contact as subscribed and stores the event', async () => {
    const { project, auth } = await newProject(pigeon);
    const res = await api(pigeon, pk(project)).events.track({
      body: { email: 'New@Example.com', event: 'signed-up', data: { plan: 'pro' } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: { contact: expect.any(String), event: expect.any(String), timestamp: expect.any(String) },
    });
    const contact = await contactByEmail(auth, 'new@example.com');
    expect(contact).toMatchObject({ id: bodyOf(res, 200).data.contact, subscribed: true, data: { plan: 'pro' } });
    expect(await eventNames(pigeon, contact.id)).toEqual(['signed-up']);
  });

  it('honours subscribed:false for a new contact and keeps an existing contact state unless given', async () => {
    const { project, auth } = await newProject(pigeon);
    await api(pigeon, pk(project)).events.track({ body: { email: 'a@example.com', event: 'x', subscribed: false } });
    const created = await contactByEmail(auth, 'a@example.com');
    expect(created.subscribed).toBe(false);
    await api(pigeon, pk(project)).events.track({ body: { email: 'a@example.com', event: 'x' } });
    expect((await contactByEmail(auth, 'a@example.com')).subscribed).toBe(false);
    await api(pigeon, pk(project)).events.track({ body: { email: 'a@example.com', event: 'y', subscribed: true } });
    expect((await contactByEmail(auth, 'a@example.com')).subscribed).toBe(true);
    expect(await eventNames(pigeon, created.id)).toEqual(['x', 'x', 'contact.subscribed', 'y']);
  });

  it('stores a new event record for every call with a repeated name', async () => {
    const { project, auth } = await newProject(pigeon);
    const first = await api(pigeon, pk(project)).events.track({ body: { email: 'r@example.com', event: 'login' } });
    const second = await api(pigeon, pk(project)).events.track({ body: { email: 'r@example.com', event: 'login' } });
    expect(bodyOf(second, 200).data.event).not.toBe(bodyOf(first, 200).data.event);
    expect(await eventNames(pigeon, (await contactByEmail(auth, 'r@example.com')).id)).toEqual(['login', 'login']);
  });

  it('applies the data rules on track: objects stored, transient values only on the event', async () => {
    const { project, auth } = await newProject(pigeon);
    await api(pigeon, pk(project)).events.track({
      body: {
        email: 'd@example.com',
        event: 'purchase',
        data: {
          plan: 'pro',
          address: { city: 'Oslo' },
          coupon: { value: 'X1', persistent: false },
          empty: '',
          email: 'evil@example.com',
        },
      },
    });
    const contact = await contactByEmail(auth, 'd@example.com');
    expect(contact.data).toEqual({ plan: 'pro', address: { city: 'Oslo' } });
    const events = await api(pigeon, auth).events.byContact({ params: { contactId: contact.id } });
    expect(bodyOf(events, 200).data[0]?.data).toEqual({ plan: 'pro', address: { city: 'Oslo' }, coupon: 'X1' });
  });

  it('refuses reserved names with 422 reserved_event on /v1/track and /events/track, storing nothing', async () => {
    const { project, auth } = await newProject(pigeon);
    const reserved = [
      'contact.subscribed',
      'contact.unsubscribed',
      'contact.topic.subscribed',
      'Contact.Topic.Unsubscribed',
      'email.sent',
      'Email.Open',
      'segment.vip.entry',
      'segment.vip.exit',
    ];
    for (const event of reserved) {
      const body = { email: 'z@example.com', event };
      for (const res of [
        await api(pigeon, pk(project)).events.track({ body }),
        await api(pigeon, auth).events.trackFromDashboard({ body }),
      ]) {
        const error = expectEnvelope(res, 422, 'VALIDATION_ERROR');
        expect(error.errors).toEqual([expect.objectContaining({ field: 'event', code: 'reserved_event' })]);
      }
    }
    expect(bodyOf(await api(pigeon, auth).contacts.list(), 200).total).toBe(0);
    expect(
      (await api(pigeon, pk(project)).events.track({ body: { email: 'z@example.com', event: 'segment.signup' } }))
        .status,
    ).toBe(200);
  });

  it('refuses empty, over-long and control-character names', async () => {
    const { project } = await newProject(pigeon);
    for (const event of ['', '   ', 'x'.repeat(201), 'bad\nname']) {
      expectEnvelope(
        await api(pigeon, pk(project)).events.track({ body: { email: 'e@example.com', event } }),
        422,
        'VALIDATION_ERROR',
      );
    }
  });

  it('accepts the secret key too, and refuses a missing key', async () => {
    const { auth } = await newProject(pigeon);
    expect((await api(pigeon, auth).events.track({ body: { email: 's@example.com', event: 'x' } })).status).toBe(200);
    expectEnvelope(
      await api(pigeon).events.track({ body: { email: 's@example.com', event: 'x' } }),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('Idempotency-Key', () => {
  const track = (
    project: { publicKey: string },
    key: string,
    body: ClientInferRequest<typeof contract.events.track>['body'] = { email: 'i@example.com', event: 'order' },
  ) => api(pigeon, { ...pk(project), 'idempotency-key': key }).events.track({ body });

  it('answers a reused key with 409 and the original request, and does not perform it again', async () => {
    const { project, auth } = await newProject(pigeon);
    const first = await track(project, 'order-1');
    expect(first.status).toBe(200);
    const again = await track(project, 'order-1');
    const error = expectEnvelope(again, 409, 'IDEMPOTENCY_KEY_REUSED');
    expect(error.details).toEqual({
      key: 'order-1',
      originalRequest: 'POST /v1/track',
      originalRequestAt: expect.any(String),
      originalStatusCode: 200,
      originalResponse: first.body,
    });
    expect(await eventNames(pigeon, (await contactByEmail(auth, 'i@example.com')).id)).toEqual(['order']);
  });

  it('answers a key reused for another track (event, contact or data) with 422 and records nothing', async () => {
    const { project, auth } = await newProject(pigeon);
    const body = { email: 'o@example.com', event: 'order', data: { total: 10 } };
    expect((await track(project, 'order-2', body)).status).toBe(200);
    for (const other of [
      { ...body, event: 'refund' },
      { ...body, email: 'p@example.com' },
      { ...body, data: { total: 11 } },
    ]) {
      const error = expectEnvelope(await track(project, 'order-2', other), 422, 'IDEMPOTENCY_KEY_REUSED');
      expect(error.details).toMatchObject({ key: 'order-2', originalRequest: 'POST /v1/track' });
    }
    expectEnvelope(await track(project, 'order-2', body), 409, 'IDEMPOTENCY_KEY_REUSED');
    expect(await eventNames(pigeon, (await contactByEmail(auth, 'o@example.com')).id)).toEqual(['order']);
    expect(bodyOf(await api(pigeon, auth).contacts.list(), 200).total).toBe(1);
  });

  it('carries no originalResponse while the first request is in flight or after a 5xx', async () => {
    const { project } = await newProject(pigeon);
    const rows = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT id FROM projects WHERE public_key = ${project.publicKey}`,
    );
    const projectId = rows[0]?.id;
    await insertIdempotencyKey(pigeon.deps.db.pool, { projectId, key: 'in-flight', request: 'POST /v1/track' });
    await insertIdempotencyKey(pigeon.deps.db.pool, {
      projectId,
      key: 'failed',
      request: 'POST /v1/track',
      statusCode: 500,
    });
    const inFlight = expectEnvelope(await track(project, 'in-flight'), 409, 'IDEMPOTENCY_KEY_REUSED');
    expect(inFlight.details).toMatchObject({ originalStatusCode: null });
    expect(inFlight.details).not.toHaveProperty('originalResponse');
    const failed = expectEnvelope(await track(project, 'failed'), 409, 'IDEMPOTENCY_KEY_REUSED');
    expect(failed.details).toMatchObject({ originalStatusCode: 500 });
    expect(failed.details).not.toHaveProperty('originalResponse');
  });

  it('performs exactly one of many concurrent requests with one key', async () => {
    const { project, auth } = await newProject(pigeon);
    const results = await Promise.all(Array.from({ length: 12 }, () => track(project, 'burst')));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(11);
    expect(await eventNames(pigeon, (await contactByEmail(auth, 'i@example.com')).id)).toEqual(['order']);
  });

  it('releases the key after a 4xx so the corrected request can use it', async () => {
    const { project } = await newProject(pigeon);
    expectEnvelope(await track(project, 'fix-me', { email: 'nope', event: 'order' }), 422, 'VALIDATION_ERROR');
    expect((await track(project, 'fix-me')).status).toBe(200);
  });

  /** A real PostgreSQL failure inside the track statement, for events named `name` only. */
  async function withFailingEvents(name: string, body: string, work: () => Promise<void>) {
    const db = pigeon.deps.db.pool;
    await db.query(
      `CREATE FUNCTION test_fail_event() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body}; RETURN NEW; END $$`,
    );
    await db.query(
      `CREATE TRIGGER test_fail_event BEFORE INSERT ON events FOR EACH ROW WHEN (NEW.name = '${name}') EXECUTE FUNCTION test_fail_event()`,
    );
    try {
      await work();
    } finally {
      await db.query('DROP TRIGGER test_fail_event ON events');
      await db.query('DROP FUNCTION test_fail_event()');
    }
  }

  it('releases the key after a 5xx whose work rolled back, so a retry is performed', async () => {
    const { project, auth } = await newProject(pigeon);
    const body = { email: 'rolled-back@example.com', event: 'explodes' };
    await withFailingEvents('explodes', "RAISE EXCEPTION 'refused by the test'", async () => {
      expectEnvelope(await track(project, 'retry-after-500', body), 500, 'INTERNAL_SERVER_ERROR');
    });
    expect(bodyOf(await api(pigeon, auth).contacts.list(), 200).total).toBe(0); // nothing left behind
    expect((await track(project, 'retry-after-500', body)).status).toBe(200);
    expect(await eventNames(pigeon, (await contactByEmail(auth, body.email)).id)).toEqual(['explodes']);
  });

  it('claims the key in the track statement itself: after a lost connection the retry is performed, once', async () => {
    const { project, auth } = await newProject(pigeon);
    const body = { email: 'lost@example.com', event: 'loses-connection' };
    await withFailingEvents('loses-connection', 'PERFORM pg_terminate_backend(pg_backend_pid())', async () => {
      expectEnvelope(await track(project, 'unknown-outcome', body), 500, 'INTERNAL_SERVER_ERROR');
    });
    // The claim and the event commit together or not at all, so nothing was claimed.
    const retried = await track(project, 'unknown-outcome', body);
    expect(retried.status).toBe(200);
    const again = expectEnvelope(await track(project, 'unknown-outcome', body), 409, 'IDEMPOTENCY_KEY_REUSED');
    expect(again.details?.originalResponse).toEqual(retried.body);
    expect(await eventNames(pigeon, (await contactByEmail(auth, body.email)).id)).toEqual(['loses-connection']);
  });

  it('keys are per project and expire', async () => {
    const a = await newProject(pigeon);
    const b = await newProject(pigeon);
    expect((await track(a.project, 'shared')).status).toBe(200);
    expect((await track(b.project, 'shared')).status).toBe(200);
    await expireIdempotencyKeys(pigeon.deps.db.pool, a.project.id);
    expect((await track(a.project, 'shared')).status).toBe(200);
  });

  it('refuses a malformed key with 422 before doing anything', async () => {
    const { project, auth } = await newProject(pigeon);
    for (const key of ['x'.repeat(256), 'caf\u00e9', 'a\tb']) {
      const res = await api(pigeon, { ...pk(project), 'idempotency-key': key }).events.track({
        body: { email: 'm@example.com', event: 'x' },
      });
      const error = expectEnvelope(res, 422, 'VALIDATION_ERROR');
      expect(error.errors?.[0]?.field).toBe('Idempotency-Key');
    }
    expect(bodyOf(await api(pigeon, auth).contacts.list(), 200).total).toBe(0);
  });
});

describe('events API', () => {
  it('lists, filters, counts and names events, newest first', async () => {
    const { project, auth } = await newProject(pigeon);
    for (const event of ['view', 'view', 'buy']) {
      await api(pigeon, pk(project)).events.track({ body: { email: 'l@example.com', event } });
    }
    const all = await api(pigeon, auth).events.list({ query: { limit: 2 } });
    expect(all.body).toMatchObject({ total: 3, hasMore: true });
    expect(bodyOf(all, 200).data[0]).toMatchObject({ name: 'buy', contactEmail: 'l@example.com' });
    const next = await api(pigeon, auth).events.list({
      query: { limit: 2, cursor: bodyOf(all, 200).cursor ?? undefined },
    });
    expect(next.body).toMatchObject({ total: 0, hasMore: false });
    expect(bodyOf(next, 200).data).toHaveLength(1);
    const views = await api(pigeon, auth).events.list({ query: { name: 'view' } });
    expect(bodyOf(views, 200).total).toBe(2);
    const future = await api(pigeon, auth).events.list({
      query: { from: new Date(Date.now() + 60_000).toISOString() },
    });
    expect(bodyOf(future, 200).total).toBe(0);
    // Stats read the analytics rollup, which the change feed's consumer fills a moment later.
    const stats = await until(
      () => api(pigeon, auth).events.stats(),
      (r) => r.status === 200 && r.body.total === 3,
    );
    expect(stats.body).toMatchObject({
      total: 3,
      byName: [
        { name: 'view', count: 2 },
        { name: 'buy', count: 1 },
      ],
    });
    expect(bodyOf(stats, 200).byDay).toEqual([{ day: new Date().toISOString().slice(0, 10), count: 3 }]);
    const names = await api(pigeon, auth).events.names();
    expect(bodyOf(names, 200).map((n: { name: string; count: number }) => [n.name, n.count])).toEqual([
      ['buy', 1],
      ['view', 2],
    ]);
    const usage = await api(pigeon, auth).events.usage({ params: { eventName: 'view' } });
    expect(usage.body).toEqual({ name: 'view', workflows: [], segments: [], campaigns: [] });
  });

  it("keeps another project's contact events behind 404", async () => {
    const mine = await newProject(pigeon);
    const theirs = await newProject(pigeon);
    const tracked = await api(pigeon, pk(theirs.project)).events.track({
      body: { email: 'o@example.com', event: 'x' },
    });
    expectEnvelope(
      await api(pigeon, mine.auth).events.byContact({ params: { contactId: bodyOf(tracked, 200).data.contact } }),
      404,
      'NOT_FOUND',
    );
    expect(bodyOf(await api(pigeon, mine.auth).events.list(), 200).total).toBe(0);
  });

  it('deletes every event of a name as a job', async () => {
    const { project, auth } = await newProject(pigeon);
    for (const event of ['gone', 'gone', 'kept']) {
      await api(pigeon, pk(project)).events.track({ body: { email: 'g@example.com', event } });
    }
    const accepted = await api(pigeon, auth).events.deleteByName({ params: { eventName: 'gone' } });
    expect(accepted.status).toBe(202);
    const job = await waitForJob(pigeon, `/events/jobs/${bodyOf(accepted, 202).jobId}`, auth);
    expect(job).toMatchObject({ kind: 'delete_events', status: 'completed', total: 2, updated: 2 });
    const names = await api(pigeon, auth).events.names();
    expect(bodyOf(names, 200).map((n: { name: string }) => n.name)).toEqual(['kept']);
  });
});

describe('key checked inside the track statement (no Idempotency-Key)', () => {
  const stored = async (projectId: string) =>
    (
      await queryRows(pigeon.deps.db.pool, sql`SELECT count(*)::int AS n FROM events WHERE project_id = ${projectId}`)
    )[0]?.n;

  it('answers an unknown, rotated or disabled key like every other route, storing nothing', async () => {
    const { owner, project } = await newProject(pigeon);
    const body = { email: 'k@example.com', event: 'x' };
    expectEnvelope(
      await api(pigeon, { authorization: `Bearer pk_${'b'.repeat(64)}` }).events.track({ body }),
      401,
      'INVALID_API_KEY',
    );
    const rotated = await api(pigeon, { cookie: owner.cookie }).users.regenerateKeys({ params: { id: project.id } });
    expectEnvelope(await api(pigeon, pk(project)).events.track({ body }), 401, 'INVALID_API_KEY');
    const ok = await api(pigeon, pk(bodyOf(rotated, 200))).events.track({ body });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('ratelimit-limit')).toBe('1000');
    expect(Number(ok.headers.get('ratelimit-remaining'))).toBeLessThan(1000);
    await setProjectDisabled(pigeon.deps.db.pool, project.id, 'paused');
    const disabled = await api(pigeon, pk(bodyOf(rotated, 200))).events.track({ body });
    expect(expectEnvelope(disabled, 403, 'PROJECT_DISABLED').details).toEqual({ reason: 'paused' });
    expect(await stored(project.id)).toBe(1);
  });
});
