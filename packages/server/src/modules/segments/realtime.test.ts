import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { deleteFeedCursors } from '../../../test/fixtures/change-feed.js';
import { setContactData } from '../../../test/fixtures/contacts.js';
import { backdateEvents } from '../../../test/fixtures/event-log.js';
import { addSegmentMembers, clearSegmentMembers } from '../../../test/fixtures/segments.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { queryRows, sql } from '../../db/query.js';
import {
  type ContactChange,
  type FeedConsumer,
  PARTS,
  processPart,
  pruneChangeFeed,
  registerConsumer,
} from '../change-feed/feed.js';
import { sweepClockSegments } from './service.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon({ env: { CHANGE_FEED_POLL_MS: '50' } });
});
afterAll(() => pigeon?.stop());

type Auth = Record<string, string>;
const db = () => pigeon.deps.db.pool;

async function segmentEvents(contactId: string): Promise<Array<{ name: string; data: Record<string, unknown> }>> {
  return queryRows(
    db(),
    sql`SELECT name, data FROM events WHERE contact_id = ${contactId} AND name LIKE 'segment.%' ORDER BY created_at, id`,
  );
}

/** Polls until `check` passes (the feed is asynchronous by design); fails after 10 s. */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits until the membership consumer has read every change recorded so far. */
const feedDrained = () =>
  eventually(
    async () =>
      (
        await db().query<{ n: number }>(
          // Every consumer's cursor (segments and workflows read the same feed).
          `SELECT count(*)::int AS n FROM contact_changes ch
           JOIN change_feed_cursors cur ON cur.part = ch.part
           WHERE (ch.txid, ch.seq) > (cur.txid, cur.seq)`,
        )
      ).rows[0]?.n,
    (n) => n === 0,
  );

const track = (project: { publicKey: string }, email: string, data: Record<string, unknown>, event = 'update') =>
  api(pigeon, { authorization: `Bearer ${project.publicKey}` }).events.track({ body: { email, event, data } });

const proSegment = (auth: Auth, name = 'Pro') =>
  api(pigeon, auth).segments.create({
    body: {
      name,
      trackMembership: true,
      condition: { groups: [{ filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }] }] },
    },
  });

describe('tracked segments in real time', () => {
  it('records entry and exit events as tracked data changes, once each; the baseline at creation is silent', async () => {
    const { project, auth } = await newProject(pigeon);
    const before = await track(project, 'early@x.example', { plan: 'pro' });
    const seg = bodyOf(await proSegment(auth), 201);
    expect(seg.memberCount).toBe(1);

    const res = await track(project, 'ann@x.example', { plan: 'pro' });
    const ann = bodyOf(res, 200).data.contact;
    const entered = await eventually(
      () => segmentEvents(ann),
      (e) => e.length > 0,
    );
    expect(entered).toEqual([
      { name: 'segment.pro.entry', data: { segmentId: seg.id, segmentName: 'Pro', slug: 'pro' } },
    ]);
    await track(project, 'ann@x.example', { plan: 'pro', seen: 2 }); // still a member: no new event
    await track(project, 'ann@x.example', { plan: 'free' });
    const exited = await eventually(
      () => segmentEvents(ann),
      (e) => e.length > 1,
    );
    expect(exited.map((e) => e.name)).toEqual(['segment.pro.entry', 'segment.pro.exit']);
    expect(await segmentEvents(bodyOf(before, 200).data.contact)).toEqual([]);
    const got = await eventually(
      async () => bodyOf(await api(pigeon, auth).segments.get({ params: { id: seg.id } }), 200),
      (s) => s.memberCount === 1,
    );
    expect(got.memberCount).toBe(1);
  });

  it('reacts to every writer: the contacts API, subscription changes and events in conditions', async () => {
    const { project, auth } = await newProject(pigeon);
    const seg = await api(pigeon, auth).segments.create({
      body: {
        name: 'Subscribed buyers',
        trackMembership: true,
        condition: {
          groups: [
            {
              filters: [
                { field: 'subscribed', operator: 'equals', value: true },
                { field: 'event.purchase', operator: 'triggered' },
              ],
            },
          ],
        },
      },
    });
    const created = await api(pigeon, auth).contacts.create({ body: { email: 'bo@x.example' } });
    const bo = bodyOf(created, 201).id;
    await track(project, 'bo@x.example', {}, 'purchase');
    await eventually(
      () => segmentEvents(bo),
      (e) => e.length > 0,
    );
    await api(pigeon, auth).contacts.update({ params: { id: bo }, body: { subscribed: false } });
    const names = await eventually(
      () => segmentEvents(bo),
      (e) => e.length > 1,
    );
    expect(names.map((e) => e.name)).toEqual([
      `segment.${bodyOf(seg, 201).slug}.entry`,
      `segment.${bodyOf(seg, 201).slug}.exit`,
    ]);
  });

  it('follows a static segment it names: a member edit moves the tracked segment in real time', async () => {
    const { project, auth } = await newProject(pigeon);
    const vip = await api(pigeon, auth).segments.create({
      body: { name: 'VIP list', type: 'STATIC', trackMembership: true },
    });
    expect(vip.status).toBe(201);
    const vipBuyers = await api(pigeon, auth).segments.create({
      body: {
        name: 'VIP on pro',
        trackMembership: true,
        condition: {
          groups: [
            {
              filters: [
                { field: `segment.${bodyOf(vip, 201).id}`, operator: 'memberOfSegment' },
                { field: 'data.plan', operator: 'equals', value: 'pro' },
              ],
            },
          ],
        },
      },
    });
    expect(vipBuyers.status).toBe(201);
    await track(project, 'ann@x.example', { plan: 'pro' });
    const rows = await queryRows<{ id: string }>(db(), sql`SELECT id FROM contacts WHERE project_id = ${project.id}`);
    const ann = rows[0]?.id as string;
    await feedDrained();
    expect(await segmentEvents(ann)).toEqual([]);
    const added = await api(pigeon, auth).segments.addMembers({
      params: { id: bodyOf(vip, 201).id },
      body: { emails: ['ann@x.example'] },
    });
    expect(added.status).toBe(200);
    const names = await eventually(
      () => segmentEvents(ann),
      (e) => e.length >= 2,
    );
    expect(names.map((e) => e.name)).toEqual([
      `segment.${bodyOf(vip, 201).slug}.entry`,
      `segment.${bodyOf(vipBuyers, 201).slug}.entry`,
    ]);
  });

  it('compute records the differences; refresh only recounts', async () => {
    const { project, auth } = await newProject(pigeon);
    const seg = bodyOf(await proSegment(auth), 201);
    const ann = bodyOf(await track(project, 'ann@x.example', { plan: 'pro' }), 200).data.contact;
    const bob = bodyOf(await track(project, 'bob@x.example', { plan: 'free' }), 200).data.contact;
    await eventually(
      () => segmentEvents(ann),
      (e) => e.length > 0,
    );
    await feedDrained();
    // Drift the member rows behind the feed's back: bob listed, ann missing.
    await clearSegmentMembers(db(), seg.id);
    await addSegmentMembers(db(), project.id, seg.id, [bob]);
    const refreshed = await api(pigeon, auth).segments.refresh({ params: { id: seg.id } });
    expect(refreshed.status).toBe(200);
    expect(await segmentEvents(bob)).toEqual([]);
    const computed = await api(pigeon, auth).segments.compute({ params: { id: seg.id } });
    expect(computed.body).toEqual({ entered: 1, exited: 1, memberCount: 1 });
    expect((await segmentEvents(bob)).map((e) => e.name)).toEqual(['segment.pro.exit']);
    expect((await segmentEvents(ann)).map((e) => e.name)).toEqual(['segment.pro.entry', 'segment.pro.entry']);
    const again = await api(pigeon, auth).segments.compute({ params: { id: seg.id } });
    expect(again.body).toEqual({ entered: 0, exited: 0, memberCount: 1 });
    const untracked = await api(pigeon, auth).segments.update({
      params: { id: seg.id },
      body: { trackMembership: false },
    });
    expect(bodyOf(untracked, 200).trackMembership).toBe(false);
    expect((await api(pigeon, auth).segments.compute({ params: { id: seg.id } })).status).toBe(400);
  });

  it('pages a tracked segment live; its total is the kept member count, not a count of every match', async () => {
    const { project, auth } = await newProject(pigeon);
    const seg = bodyOf(await proSegment(auth), 201);
    for (const email of ['a@x.example', 'b@x.example', 'c@x.example']) await track(project, email, { plan: 'pro' });
    await feedDrained();
    const page = (query: { page: number; pageSize: number }) =>
      api(pigeon, auth).segments.contacts({ params: { id: seg.id }, query });
    const emails = (res: Awaited<ReturnType<typeof page>>) =>
      bodyOf(res, 200).data.map((c: { email: string }) => c.email);
    const first = await page({ page: 1, pageSize: 2 });
    expect(first.body).toMatchObject({ total: 3, page: 1, pageSize: 2 });
    expect(emails(first)).toEqual(['c@x.example', 'b@x.example']);
    expect(emails(await page({ page: 2, pageSize: 2 }))).toEqual(['a@x.example']);

    // The member rows emptied behind the feed's back: the items are still live, the total is the kept count.
    await queryRows(db(), sql`DELETE FROM segment_members WHERE segment_id = ${seg.id}::uuid`);
    const drifted = await page({ page: 1, pageSize: 10 });
    expect(emails(drifted)).toEqual(['c@x.example', 'b@x.example', 'a@x.example']);
    expect(bodyOf(drifted, 200).total).toBe(0);
    expect(bodyOf(await api(pigeon, auth).segments.get({ params: { id: seg.id } }), 200).memberCount).toBe(0);
    expect((await api(pigeon, auth).segments.compute({ params: { id: seg.id } })).body).toMatchObject({
      memberCount: 3,
    });
    expect(bodyOf(await page({ page: 1, pageSize: 10 }), 200).total).toBe(3);

    // A contact that stops matching leaves the page at once, and the total follows with the feed.
    await track(project, 'b@x.example', { plan: 'free' });
    expect(emails(await page({ page: 1, pageSize: 10 }))).toEqual(['c@x.example', 'a@x.example']);
    const settled = await eventually(
      async () => bodyOf(await page({ page: 1, pageSize: 10 }), 200).total,
      (total) => total === 2,
    );
    expect(settled).toBe(2);
  });

  it('time windows move with the clock: the periodic sweep records the exit', async () => {
    const { project, auth } = await newProject(pigeon);
    const seg = bodyOf(
      await api(pigeon, auth).segments.create({
        body: {
          name: 'Recent buyers',
          trackMembership: true,
          condition: {
            groups: [{ filters: [{ field: 'event.purchase', operator: 'triggeredWithin', value: 1, unit: 'days' }] }],
          },
        },
      }),
      201,
    );
    const cat = bodyOf(await track(project, 'cat@x.example', {}, 'purchase'), 200).data.contact;
    await eventually(
      () => segmentEvents(cat),
      (e) => e.length > 0,
    );
    await backdateEvents(db(), cat, 'purchase', 2);
    expect(await sweepClockSegments(db(), pigeon.deps.config.segments)).toBeGreaterThanOrEqual(1);
    expect((await segmentEvents(cat)).map((e) => e.name)).toEqual([
      `segment.${seg.slug}.entry`,
      `segment.${seg.slug}.exit`,
    ]);
  });
});

describe('the change feed', () => {
  it('is safe against commit order: a change whose transaction began earlier but commits later is not skipped', async () => {
    const { project, auth } = await newProject(pigeon);
    const seg = bodyOf(await proSegment(auth), 201);
    const early = bodyOf(await track(project, 'early@x.example', { plan: 'free' }), 200).data.contact;
    const late = bodyOf(await track(project, 'late@x.example', { plan: 'free' }), 200).data.contact;
    const slow = new pg.Client({ connectionString: pigeon.deps.db.url });
    await slow.connect();
    try {
      await slow.query('BEGIN');
      await setContactData(slow, early, { plan: 'pro' }); // takes the older xid
      await track(project, 'late@x.example', { plan: 'pro' }); // commits first, with a newer xid
      await new Promise((r) => setTimeout(r, 500));
      await slow.query('COMMIT');
    } finally {
      await slow.end();
    }
    const earlyEvents = await eventually(
      () => segmentEvents(early),
      (e) => e.length > 0,
    );
    const lateEvents = await eventually(
      () => segmentEvents(late),
      (e) => e.length > 0,
    );
    expect(earlyEvents.map((e) => e.name)).toEqual([`segment.${seg.slug}.entry`]);
    expect(lateEvents.map((e) => e.name)).toEqual([`segment.${seg.slug}.entry`]);
  });

  it('a failed batch moves no cursor: the same changes come again, and nothing is handled twice', async () => {
    const { project } = await newProject(pigeon);
    const consumer = { name: `test-${Date.now()}`, seen: [] as ContactChange[], fail: true };
    const failing: FeedConsumer = {
      name: consumer.name,
      async handle(_client, changes) {
        if (consumer.fail) throw new Error('crash mid-batch');
        consumer.seen.push(...changes);
      },
    };
    await registerConsumer(db(), consumer.name);
    for (let i = 0; i < 20; i++) await track(project, `c${i}@x.example`, { i });
    const drain = async () => {
      let handled = 0;
      for (let part = 0; part < PARTS; part++) handled += await processPart(pigeon.deps, failing, part, 1000);
      return handled;
    };
    await expect(drain()).rejects.toThrow('crash mid-batch');
    consumer.fail = false;
    await eventually(
      drain,
      () => consumer.seen.filter((c) => c.projectId === project.id && c.kind === 'event').length >= 20,
    );
    await drain();
    const ours = consumer.seen.filter((c) => c.projectId === project.id);
    const events = ours.filter((c) => c.kind === 'event');
    expect(events).toHaveLength(20);
    expect(new Set(events.map((c) => c.eventId)).size).toBe(20);
    expect(ours.filter((c) => c.kind === 'created')).toHaveLength(20);
    // Rows every consumer has passed are pruned; the slowest consumer holds the rest back.
    await deleteFeedCursors(db(), consumer.name);
    await feedDrained();
    await pruneChangeFeed(db());
    const rows = await queryRows(db(), sql`SELECT 1 FROM contact_changes WHERE project_id = ${project.id}`);
    expect(rows).toHaveLength(0);
  });

  it('two worker processes share the feed without doing any change twice', async () => {
    const worker = await startTestPigeon({
      databaseUrl: pigeon.deps.db.url,
      role: 'worker',
      env: { CHANGE_FEED_POLL_MS: '20' },
    });
    try {
      const { project, auth } = await newProject(pigeon);
      const seg = bodyOf(await proSegment(auth), 201);
      const ids = await Promise.all(
        Array.from(
          { length: 60 },
          async (_, i) => bodyOf(await track(project, `w${i}@x.example`, { plan: 'pro' }), 200).data.contact,
        ),
      );
      const rows = await eventually(
        () =>
          queryRows<{ contact_id: string; n: number }>(
            db(),
            sql`SELECT contact_id, count(*)::int AS n FROM events
                WHERE project_id = ${project.id} AND name = ${`segment.${seg.slug}.entry`} GROUP BY 1`,
          ),
        (r) => r.length >= 60,
      );
      expect(rows).toHaveLength(60);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      expect(new Set(rows.map((r) => r.contact_id))).toEqual(new Set(ids));
    } finally {
      await worker.stop();
    }
  });
});
