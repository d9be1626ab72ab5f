import { EVENTS_TOTAL_CAP } from '@pigeon/contract';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { insertEventsFrom } from '../../../test/fixtures/event-log.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { until } from '../../../test/until.js';
import { seedHistory } from '../../db/history-seed.js';
import { queryRows, type Sql, sql } from '../../db/query.js';
import { applyRetention } from '../retention/service.js';

/**
 * The project-wide history reads over more events than the list count goes to (ARCHITECTURE.md
 * "History reads"): `total` exact below `EVENTS_TOTAL_CAP` and flagged at it, `/events/stats` and
 * the activity stats from the rollup, before and after retention removed the raw events.
 */
let pigeon: TestPigeon;
let pool: pg.Pool;
type Project = Awaited<ReturnType<typeof newProject>>;
let big: Project;
let small: Project;
const BIG_EVENTS = EVENTS_TOTAL_CAP + 500;

const count = async (rows: Sql) =>
  Number((await queryRows<{ n: string }>(pool, sql`SELECT count(*) AS n FROM (${rows}) t`))[0]?.n);
const rolledUp = async (projectId: string) =>
  Number(
    (
      await queryRows<{ n: number }>(
        pool,
        sql`SELECT coalesce(sum(count), 0)::int AS n FROM event_counts WHERE project_id = ${projectId}`,
      )
    )[0]?.n,
  );
const events = (who: Project) => api(pigeon, who.auth).events;
const activity = (who: Project) => api(pigeon, who.auth).activity;

beforeAll(async () => {
  pigeon = await startTestPigeon();
  pool = pigeon.deps.db.pool;
  await pool.query(`SELECT history_partition_ensure(t, m::date) FROM unnest(ARRAY['events', 'emails']) t,
    generate_series(date_trunc('month', now() - interval '3 months'), now(), interval '1 month') m`);
  big = await newProject(pigeon);
  small = await newProject(pigeon);
  // 60 days of history; the rows go in through the feed trigger, so the analytics consumer rolls them up.
  await seedHistory(pool, { projectId: big.project.id, contacts: 50, emails: 10, events: BIG_EVENTS, days: 60 });
  await seedHistory(pool, { projectId: small.project.id, contacts: 5, emails: 10, events: 120, days: 60 });
  for (const { project } of [big, small]) {
    const raw = await count(sql`SELECT 1 FROM events WHERE project_id = ${project.id}`);
    expect(
      await until(
        () => rolledUp(project.id),
        (n) => n === raw,
        60_000,
      ),
    ).toBe(raw);
  }
}, 120_000);
afterAll(() => pigeon?.stop());

describe('list totals', () => {
  it('counts up to the cap and says so past it; exact with filters below it; 0 on later pages', async () => {
    const first = await events(big).list({ query: { limit: 5 } });
    expect(first.body).toMatchObject({ total: EVENTS_TOTAL_CAP, totalCapped: true, hasMore: true });
    expect(bodyOf(first, 200).data).toHaveLength(5);
    const listed = await activity(big).list({ query: { limit: 5 } });
    expect(listed.body).toMatchObject({ total: EVENTS_TOTAL_CAP, totalCapped: true });
    const next = await events(big).list({ query: { limit: 5, cursor: bodyOf(first, 200).cursor ?? undefined } });
    expect(next.body).toMatchObject({ total: 0, totalCapped: false });

    const views = await count(sql`SELECT 1 FROM events WHERE project_id = ${big.project.id} AND name = 'page.viewed'`);
    expect(views).toBeLessThan(EVENTS_TOTAL_CAP);
    expect((await events(big).list({ query: { name: 'page.viewed', limit: 1 } })).body).toMatchObject({
      total: views,
      totalCapped: false,
    });
    const since = new Date(Date.now() - 7 * 86_400_000).toISOString();
    const lastWeek = await count(
      sql`SELECT 1 FROM events WHERE project_id = ${big.project.id} AND created_at >= ${since}`,
    );
    expect((await events(big).list({ query: { limit: 1, from: since } })).body).toMatchObject({
      total: lastWeek,
      totalCapped: false,
    });
    // `event` is every tracked (not Pigeon-emitted) name: page.viewed and order.placed of the seed.
    const custom = await count(
      sql`SELECT 1 FROM events WHERE project_id = ${big.project.id} AND name <> 'email.opened'`,
    );
    expect(custom).toBeLessThan(EVENTS_TOTAL_CAP);
    const customs = await activity(big).list({ query: { types: 'event', limit: 1 } });
    expect(customs.body).toMatchObject({ total: custom, totalCapped: false });
    const contact = (
      await queryRows<{ contact_id: string }>(
        pool,
        sql`SELECT contact_id FROM events WHERE project_id = ${big.project.id} LIMIT 1`,
      )
    )[0]?.contact_id;
    const ofContact = await count(sql`SELECT 1 FROM events WHERE contact_id = ${contact}`);
    const contactId = contact ?? '';
    expect((await events(big).byContact({ params: { contactId }, query: { limit: 1 } })).body).toMatchObject({
      total: ofContact,
      totalCapped: false,
    });
  });

  it("counts only the caller's project", async () => {
    const query = { limit: 1 };
    expect((await events(small).list({ query })).body).toMatchObject({ total: 120, totalCapped: false });
    expect((await activity(small).list({ query })).body).toMatchObject({ total: 120, totalCapped: false });
  });
});

describe('stats from the rollup', () => {
  /** The raw events' counts per name and per UTC day over [from, to), the way the stats read them. */
  async function rawStats(projectId: string, from: string, to: string) {
    const where = sql`project_id = ${projectId} AND created_at >= ${from} AND created_at < ${to}`;
    const byName = await queryRows<{ name: string; count: number }>(
      pool,
      sql`SELECT name, count(*)::int AS count FROM events WHERE ${where} GROUP BY name ORDER BY count DESC, name`,
    );
    const byDay = await queryRows<{ day: string; count: number }>(
      pool,
      sql`SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS count
       FROM events WHERE ${where} GROUP BY 1 ORDER BY 1`,
    );
    const total = byName.reduce((sum, r) => sum + r.count, 0);
    return { from, to, total, byName, byDay };
  }

  // Whole hours: the stats count whole hours of the rollup (a range is widened to them).
  const hour = (msAgo: number) => new Date(Math.floor((Date.now() - msAgo) / 3600_000) * 3600_000).toISOString();
  const range = { from: hour(45 * 86_400_000), to: hour(-3600_000) };

  it('equal the raw counts while the raw events exist, per name and per day, for each project alone', async () => {
    for (const who of [big, small]) {
      const expected = await rawStats(who.project.id, range.from, range.to);
      expect(expected.total).toBeGreaterThan(0);
      expect((await events(who).stats({ query: range })).body).toEqual(expected);
      const stats = bodyOf(await activity(who).stats({ query: range }), 200);
      expect(stats.total).toBe(expected.total);
      expect(stats.byDay).toEqual(expected.byDay);
    }
    // A range inside an hour is widened to that hour, and the answer says so.
    const inside = await events(small).stats({ query: { from: '2026-01-01T10:15:00Z', to: '2026-01-01T10:45:00Z' } });
    expect(inside.body).toMatchObject({ from: '2026-01-01T10:00:00.000Z', to: '2026-01-01T11:00:00.000Z' });
    // The default range is the last 30 days (widened to whole hours).
    const defaults = bodyOf(await events(small).stats(), 200);
    expect(Date.parse(defaults.to) - Date.parse(defaults.from)).toBeGreaterThanOrEqual(30 * 86_400_000);
    expect(defaults.total).toBe((await rawStats(small.project.id, defaults.from, defaults.to)).total);
  });

  it('stay the same after retention removed the raw events', async () => {
    const before = bodyOf(await events(big).stats({ query: range }), 200);
    const otherBefore = bodyOf(await events(small).stats({ query: range }), 200);
    const patched = await api(pigeon, { cookie: big.owner.cookie }).users.updateProject({
      params: { id: big.project.id },
      body: { retention: { eventsDays: 7 } },
    });
    expect(patched.status).toBe(200);
    const run = await applyRetention(pool);
    expect(run.eventsDeleted).toBeGreaterThan(0);
    const left = await rawStats(big.project.id, range.from, range.to);
    expect(left.total).toBeLessThan(before.total / 2);

    expect((await events(big).stats({ query: range })).body).toEqual(before);
    expect(bodyOf(await activity(big).stats({ query: range }), 200).total).toBe(before.total);
    // The other project, on the default retention, kept its events and its counts.
    expect((await events(small).stats({ query: range })).body).toEqual(otherBefore);
    expect(otherBefore).toEqual(await rawStats(small.project.id, range.from, range.to));
  });
});

describe('the first page of a long history', () => {
  /** `n` events of a new project, their ids of `idAgo` and `created_at` of `createdAgo` (intervals). */
  const insert = (projectId: string, n: number, idAgo: string, createdAgo = idAgo) =>
    insertEventsFrom(
      pool,
      sql`SELECT overlay(uuidv7_floor(now() - ${idAgo}::interval - make_interval(secs => g))::text
                         placing substr(md5(random()::text), 1, 12) from 25)::uuid,
                 ${projectId}::uuid, NULL::uuid, 'page.viewed', '{}'::jsonb, now() - ${createdAgo}::interval - make_interval(secs => g)
          FROM generate_series(1, ${n}::int) g`,
    );
  const newest = async (projectId: string) =>
    (
      await queryRows<{ id: string }>(
        pool,
        sql`SELECT id::text FROM events WHERE project_id = ${projectId} ORDER BY created_at DESC, id DESC LIMIT 50`,
      )
    ).map((r) => r.id);
  const firstPage = async (who: Project) => {
    const res = await events(who).list({ query: { limit: 50 } });
    expect(res.status).toBe(200);
    return bodyOf(res, 200).data.map((e) => e.id);
  };
  // An id up to a day older than its created_at is allowed (idsSince): 53 hours, created 31 hours ago.
  const lateRecorded = (projectId: string) => insert(projectId, 1, '53 hours', '31 hours');

  it('is the newest events when the last day fills it', async () => {
    const who = await newProject(pigeon);
    await insert(who.project.id, 60, '0 hours');
    await lateRecorded(who.project.id);
    await insert(who.project.id, 30, '5 days');
    const page = await firstPage(who);
    expect(page).toHaveLength(50);
    expect(page).toEqual(await newest(who.project.id));
  });

  it('reads further back when the last day does not fill it, past an id older than its time', async () => {
    const who = await newProject(pigeon);
    await insert(who.project.id, 10, '0 hours');
    await insert(who.project.id, 45, '36 hours');
    await lateRecorded(who.project.id);
    await insert(who.project.id, 10, '5 days');
    const expected = await newest(who.project.id);
    const page = await firstPage(who);
    expect(page).toEqual(expected);
    // The late-recorded event ranks 11th by its time, outside the ids of the last two days.
    const [late] = await queryRows<{ id: string }>(
      pool,
      sql`SELECT id::text FROM events WHERE project_id = ${who.project.id} AND created_at < now() - interval '30 hours'
            AND id < uuidv7_floor(now() - interval '48 hours') AND created_at > now() - interval '32 hours'`,
    );
    expect(page[10]).toBe(late?.id);
  });

  it('walked with its cursors, gives every event once in order, one recorded late included', async () => {
    const who = await newProject(pigeon);
    await insert(who.project.id, 50, '0 hours');
    await insert(who.project.id, 45, '36 hours');
    // First on the second page by its time; its id is older than the two days before that page's start.
    await lateRecorded(who.project.id);
    await insert(who.project.id, 10, '40 hours');
    await insert(who.project.id, 10, '5 days');
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await events(who).list({ query: { limit: 50, ...(cursor ? { cursor } : {}) } });
      expect(res.status).toBe(200);
      const body = bodyOf(res, 200);
      walked.push(...body.data.map((e) => e.id));
      cursor = body.cursor;
    } while (cursor);
    const all = await queryRows<{ id: string }>(
      pool,
      sql`SELECT id::text FROM events WHERE project_id = ${who.project.id} ORDER BY created_at DESC, id DESC`,
    );
    expect(walked).toHaveLength(116);
    expect(walked).toEqual(all.map((r) => r.id));
  });
});
