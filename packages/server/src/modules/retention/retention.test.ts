import { type contract, RETENTION_DEFAULTS } from '@pigeon/contract';
import type { ClientInferRequest } from '@ts-rest/core';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject, type SignedUp, type TestProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { seedHistory } from '../../db/history-seed.js';
import { historyPartitions } from '../../db/partitions.js';
import { queryRows, type Sql, sql } from '../../db/query.js';
import { eventsRetainedSince } from '../event-log/reach.js';
import { applyRetention } from './service.js';

const DAY = 86_400_000;
let pigeon: TestPigeon;
let pool: pg.Pool;
let short: { owner: SignedUp; project: TestProject };
let long: { owner: SignedUp; project: TestProject };

const n = async (text: string, values: unknown[] = []) =>
  Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM (${text}) t`, values)).rows[0]?.n);
const patch = (
  who: { owner: SignedUp; project: TestProject },
  body: ClientInferRequest<typeof contract.users.updateProject>['body'],
) => api(pigeon, { cookie: who.owner.cookie }).users.updateProject({ params: { id: who.project.id }, body });
const bearer = (who: { project: TestProject }) => api(pigeon, { authorization: `Bearer ${who.project.secretKey}` });

beforeAll(async () => {
  pigeon = await startTestPigeon({ role: 'api' });
  pool = pigeon.deps.db.pool;
  // The months the seeded year spans (the template database only has partitions from its migration on).
  await pool.query(`SELECT history_partition_ensure(t, m::date) FROM unnest(ARRAY['events', 'emails']) t,
    generate_series(date_trunc('month', now() - interval '13 months'), now(), interval '1 month') m`);
  short = await newProject(pigeon);
  long = await newProject(pigeon);
  for (const { project } of [short, long]) {
    await seedHistory(pool, { projectId: project.id, contacts: 40, emails: 400, events: 2_000, days: 365 });
  }
  // Rollup rows (analytics, campaign stats read them) and a campaign of the short-retention project.
  await pool.query(
    `INSERT INTO event_counts (project_id, hour, name, part, count)
     SELECT $1, date_trunc('hour', now() - g * interval '1 day'), 'page.viewed', 0, 10 FROM generate_series(1, 300) g`,
    [short.project.id],
  );
  await pool.query(
    `INSERT INTO campaigns (id, project_id, name, subject, body, from_email, type, status, audience_type, total_recipients)
     VALUES (uuidv7_compat(), $1, 'Old news', 'Hi', 'Body', 'news@example.com', 'MARKETING', 'SENT', 'ALL', 400)`,
    [short.project.id],
  );
}, 120_000);
afterAll(() => pigeon?.stop());

describe('retention settings', () => {
  it('starts from the documented defaults and says in event lists how far back they reach', async () => {
    expect((short.project as TestProject & { retention: unknown }).retention).toEqual(RETENTION_DEFAULTS);
    const events = await bearer(short).events.list({ query: { limit: 1 } });
    expect(events.status).toBe(200);
    const reach = Date.parse(bodyOf(events, 200).retainedSince);
    expect(Math.abs(reach - (Date.now() - RETENTION_DEFAULTS.eventsDays * DAY))).toBeLessThan(60_000);
  });

  it('refuses a value out of range with a 422 naming the field, and changes nothing', async () => {
    for (const [field, value] of [
      ['eventsDays', 0],
      ['contentDays', 3651],
      ['emailsDays', 1.5],
    ] as const) {
      const res = await patch(short, { retention: { [field]: value } });
      const error = expectEnvelope(res, 422, 'VALIDATION_ERROR');
      expect(error.errors?.map((e) => e.field)).toEqual([`retention.${field}`]);
    }
    const projects = await api(pigeon, { cookie: short.owner.cookie }).users.listProjects();
    expect(bodyOf(projects, 200)[0]?.retention).toEqual(RETENTION_DEFAULTS);
  });

  it('changes one setting at a time and reports the new reach', async () => {
    const res = await patch(short, { retention: { eventsDays: 30, contentDays: 7 } });
    expect(res.status).toBe(200);
    expect(bodyOf(res, 200).retention).toEqual({
      eventsDays: 30,
      contentDays: 7,
      emailsDays: RETENTION_DEFAULTS.emailsDays,
    });
    expect(bodyOf(await patch(short, { retention: { emailsDays: 60 } }), 200).retention).toEqual({
      eventsDays: 30,
      contentDays: 7,
      emailsDays: 60,
    });
    const activity = bodyOf(await bearer(short).activity.list({ query: { limit: 1 } }), 200);
    expect(Math.abs(Date.parse(activity.retainedSince) - (Date.now() - 30 * DAY))).toBeLessThan(60_000);
  });
});

describe('applying retention', () => {
  it('deletes and clears in bounded batches per project; rollups, campaigns, contacts and suppressions stay', async () => {
    const p = short.project.id;
    const other = long.project.id;
    const old = (days: number) => `uuidv7_floor(now() - interval '${days} days')`;
    // A message still queued 20 days after it was made (scheduled ahead): content clearing waits behind it.
    const queued = (
      await pool.query(
        `UPDATE emails SET status = 'QUEUED' WHERE id = (SELECT id FROM emails WHERE project_id = $1 AND id < ${old(20)}
           ORDER BY id DESC LIMIT 1) RETURNING id::text`,
        [p],
      )
    ).rows[0].id as string;
    const before = {
      events: await n('SELECT 1 FROM events WHERE project_id = $1', [p]),
      recentEvents: await n(`SELECT 1 FROM events WHERE project_id = $1 AND id >= ${old(30)}`, [p]),
      recentEmails: await n(`SELECT 1 FROM emails WHERE project_id = $1 AND id >= ${old(60)}`, [p]),
      otherEvents: await n('SELECT 1 FROM events WHERE project_id = $1', [other]),
      otherEmails: await n(`SELECT 1 FROM emails WHERE project_id = $1 AND html <> ''`, [other]),
      rollup: (await queryRows(pool, sql`SELECT sum(count)::int AS n FROM event_counts WHERE project_id = ${p}`))[0]?.n,
      contacts: await n('SELECT 1 FROM contacts WHERE project_id = $1', [p]),
      suppressions: await n('SELECT 1 FROM suppressions WHERE project_id = $1', [p]),
    };
    expect(before.events - before.recentEvents).toBeGreaterThan(1_000);

    const run = await applyRetention(pool, { batch: 50 });
    expect(run.largestStatement).toBeGreaterThan(0);
    expect(run.largestStatement).toBeLessThanOrEqual(50);
    expect(run.droppedPartitions).toEqual([]); // the other project keeps 400 days
    expect(run.eventsDeleted).toBe(before.events - before.recentEvents);

    expect(await n(`SELECT 1 FROM events WHERE project_id = $1 AND id < ${old(31)}`, [p])).toBe(0);
    expect(await n('SELECT 1 FROM events WHERE project_id = $1', [p])).toBe(before.recentEvents);
    expect(await n(`SELECT 1 FROM emails WHERE project_id = $1 AND id < ${old(61)} AND status <> 'QUEUED'`, [p])).toBe(
      0,
    );
    expect(await n(`SELECT 1 FROM emails WHERE project_id = $1 AND status = 'QUEUED' AND html <> ''`, [p])).toBe(1);
    expect(await n(`SELECT 1 FROM emails WHERE project_id = $1 AND id >= ${old(60)}`, [p])).toBe(before.recentEmails);
    // Content older than 7 days is gone, its metadata stays; newer content stays. Up to the queued
    // message only: it and what came after wait until it is sent.
    const content = () =>
      pool.query(
        `SELECT CASE WHEN id < $2::uuid THEN 'before queued' WHEN id < ${old(8)} THEN 'old' ELSE 'new' END AS age,
                bool_and(html = '' AND text = '' AND headers = '{}') AS cleared,
                bool_and(subject <> '' AND to_email <> '') AS metadata
         FROM emails WHERE project_id = $1 AND id <> $2::uuid GROUP BY 1 ORDER BY 1`,
        [p, queued],
      );
    expect((await content()).rows).toEqual([
      { age: 'before queued', cleared: true, metadata: true },
      { age: 'new', cleared: false, metadata: true },
      { age: 'old', cleared: false, metadata: true },
    ]);
    await pool.query(`UPDATE emails SET status = 'DELIVERED' WHERE id = $1`, [queued]);
    expect((await applyRetention(pool, { batch: 50 })).contentCleared).toBeGreaterThan(1);
    expect((await content()).rows).toEqual([
      { age: 'before queued', cleared: true, metadata: true },
      { age: 'new', cleared: false, metadata: true },
      { age: 'old', cleared: true, metadata: true },
    ]);
    // The other project, on the defaults, lost nothing.
    expect(await n('SELECT 1 FROM events WHERE project_id = $1', [other])).toBe(before.otherEvents);
    expect(
      await n(`SELECT 1 FROM emails WHERE project_id = $1 AND html <> '' AND id >= ${old(29)}`, [other]),
    ).toBeGreaterThan(0);
    // Rollup (analytics and campaign stats), the campaign, contacts and suppressions outlive raw events.
    expect(
      (await queryRows(pool, sql`SELECT sum(count)::int AS n FROM event_counts WHERE project_id = ${p}`))[0]?.n,
    ).toBe(before.rollup);
    expect(await n(`SELECT 1 FROM campaigns WHERE project_id = $1 AND total_recipients = 400`, [p])).toBe(1);
    expect(await n('SELECT 1 FROM contacts WHERE project_id = $1', [p])).toBe(before.contacts);
    expect(await n('SELECT 1 FROM suppressions WHERE project_id = $1', [p])).toBe(before.suppressions);

    // A second run finds nothing left to do.
    const again = await applyRetention(pool, { batch: 50 });
    expect(again).toMatchObject({ eventsDeleted: 0, emailsDeleted: 0, contentCleared: 0 });
  });

  it('says on the email resource which messages retention emptied (contentCleared), per project', async () => {
    const emailsBetween = async (who: { project: TestProject }, olderDays: number, newerDays: number) =>
      queryRows<{ id: string; cleared: boolean }>(
        pool,
        sql`SELECT id::text, html = '' AS cleared FROM emails WHERE project_id = ${who.project.id}
             AND created_at < now() - make_interval(days => ${newerDays}::int)
             AND created_at >= now() - make_interval(days => ${olderDays}::int)
           ORDER BY id DESC LIMIT 3`,
      );
    // Content older than 7 days is cleared in the short project; the same age keeps it on the defaults.
    const shortOld = await emailsBetween(short, 20, 10);
    const longSameAge = await emailsBetween(long, 20, 10);
    const shortNew = await emailsBetween(short, 5, 0);
    expect(shortOld.map((e) => e.cleared)).toEqual([true, true, true]);
    expect(longSameAge.map((e) => e.cleared)).toEqual([false, false, false]);
    expect(shortNew.map((e) => e.cleared)).toEqual([false, false, false]);
    for (const [who, rows] of [
      [short, shortOld],
      [long, longSameAge],
      [short, shortNew],
    ] as const) {
      for (const row of rows) {
        const res = await bearer(who).sentEmails.get({ params: { id: row.id } });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ id: row.id, contentCleared: row.cleared, subject: expect.any(String) });
      }
    }
    // The list says the same, row by row.
    const page = await bearer(short).sentEmails.list({ query: { limit: 100 } });
    if (page.status !== 200) throw new Error(`GET /emails: ${page.status}`);
    const cleared = new Map(
      (
        await queryRows<{ id: string; cleared: boolean }>(
          pool,
          sql`SELECT id::text, html = '' AS cleared FROM emails WHERE id = ANY(${page.body.data.map((e: { id: string }) => e.id)}::uuid[])`,
        )
      ).map((r) => [r.id, r.cleared]),
    );
    expect(page.body.data.length).toBeGreaterThan(0);
    for (const e of page.body.data) expect(e.contentCleared).toBe(cleared.get(e.id));
    const before = new Date(Date.now() - 10 * DAY).toISOString();
    const older = bodyOf(await bearer(short).sentEmails.list({ query: { limit: 5, before } }), 200);
    expect(older.data.map((e) => e.contentCleared)).toEqual(Array(5).fill(true));
  });

  it('drops whole partitions once they are past every project, after clearing what references them', async () => {
    for (const who of [short, long]) {
      expect((await patch(who, { retention: { eventsDays: 100, emailsDays: 100 } })).status).toBe(200);
    }
    // Mail still on its way keeps its partition.
    await pool.query(
      `UPDATE emails SET status = 'SENDING' WHERE id = (SELECT id FROM emails WHERE id < uuidv7_floor(now() - interval '200 days') LIMIT 1)`,
    );
    const partitionsBefore = await historyPartitions(pool, 'emails');
    const { cut } = (await pool.query(`SELECT uuidv7_floor(now() - interval '100 days')::text AS cut`)).rows[0];
    const pastEveryone = partitionsBefore.filter((part) => part.to !== null && part.to <= cut).length;
    const holdingQueued = 1;
    const suppressions = await n('SELECT 1 FROM suppressions');
    const run = await applyRetention(pool, { batch: 50 });
    expect(run.largestStatement).toBeLessThanOrEqual(50);
    const expired = (table: string) => run.droppedPartitions.filter((name) => name.startsWith(`${table}_p`)).length;
    expect(pastEveryone).toBeGreaterThanOrEqual(9);
    expect(expired('events')).toBe(pastEveryone);
    expect(expired('emails')).toBe(pastEveryone - holdingQueued);
    const partitionsAfter = await historyPartitions(pool, 'emails');
    expect(partitionsAfter.length).toBe(partitionsBefore.length - expired('emails'));
    expect(partitionsAfter.some((part) => part.name === 'emails_default')).toBe(true);
    expect(await n(`SELECT 1 FROM events WHERE id < uuidv7_floor(now() - interval '101 days')`)).toBe(0);
    expect(await n(`SELECT 1 FROM emails WHERE id < uuidv7_floor(now() - interval '101 days')`)).toBe(1);
    expect(await n('SELECT 1 FROM suppressions')).toBe(suppressions);
    expect(
      await n(
        'SELECT 1 FROM suppressions s WHERE s.email_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM emails e WHERE e.id = s.email_id)',
      ),
    ).toBe(0);
  });

  it('counts a retention day as RETENTION_DAY_SECONDS, in the expiry and in the reach alike', async () => {
    // Both projects keep 100 days since the test before; a day of 2.4 hours makes that 10 days.
    const dayMs = DAY / 10;
    const newer = await n(`SELECT 1 FROM events WHERE id >= uuidv7_floor(now() - interval '9 days 23 hours')`);
    expect(await n(`SELECT 1 FROM events WHERE id < uuidv7_floor(now() - interval '10 days 1 hour')`)).toBeGreaterThan(
      0,
    );
    const run = await applyRetention(pool, { batch: 50, dayMs });
    expect(run.largestStatement).toBeLessThanOrEqual(50);
    expect(await n(`SELECT 1 FROM events WHERE id < uuidv7_floor(now() - interval '10 days 1 hour')`)).toBe(0);
    expect(await n(`SELECT 1 FROM events WHERE id >= uuidv7_floor(now() - interval '9 days 23 hours')`)).toBe(newer);
    const deps = { ...pigeon.deps, config: { ...pigeon.deps.config, retention: { intervalMinutes: 1, dayMs } } };
    const reach = Date.parse(await eventsRetainedSince(deps, short.project.id));
    expect(Math.abs(reach - (Date.now() - 100 * dayMs))).toBeLessThan(60_000);
  });
});

describe('retention of workflow executions', () => {
  it('expires finished executions with the events: re-entrant ones go, the others keep their row without context or steps', async () => {
    const who = await newProject(pigeon);
    const p = who.project.id;
    expect((await patch({ owner: who.owner, project: who.project }, { retention: { eventsDays: 30 } })).status).toBe(
      200,
    );
    const count = async (where: Sql) =>
      (await queryRows<{ n: number }>(pool, sql`SELECT count(*)::int AS n FROM ${where}`))[0]?.n;
    const [contact] = await queryRows<{ id: string }>(
      pool,
      sql`INSERT INTO contacts (id, project_id, email, subscribed) VALUES (uuidv7_compat(), ${p}::uuid, 'runs@example.com', true)
          RETURNING id`,
    );
    const workflow = async (reentry: boolean) =>
      (
        await queryRows<{ id: string }>(
          pool,
          sql`INSERT INTO workflows (id, project_id, name, trigger_event, allow_reentry)
              VALUES (uuidv7_compat(), ${p}::uuid, ${`reentry ${reentry}`}, 'signed-up', ${reentry}) RETURNING id`,
        )
      )[0]?.id as string;
    const [again, once] = [await workflow(true), await workflow(false)];
    /** An execution started `startedDays` ago, finished `finishedDays` ago (null: still waiting), with two step runs. */
    const execution = async (workflowId: string, startedDays: number, finishedDays: number | null) => {
      const status = finishedDays === null ? 'WAITING' : 'COMPLETED';
      const [row] = await queryRows<{ id: string }>(
        pool,
        sql`INSERT INTO workflow_executions (id, project_id, workflow_id, contact_id, status, context, started_at, completed_at, wake_at)
            VALUES (uuidv7_compat(), ${p}::uuid, ${workflowId}::uuid, ${contact?.id}::uuid, ${status}, '{"event": {"plan": "pro"}}',
                    now() - make_interval(days => ${startedDays}::int), now() - make_interval(days => ${finishedDays}::int),
                    CASE WHEN ${finishedDays}::int IS NULL THEN now() + interval '1 day' END)
            RETURNING id`,
      );
      await queryRows(
        pool,
        sql`INSERT INTO workflow_step_runs (id, execution_id, step_type, step_name, status)
            SELECT uuidv7_compat(), ${row?.id}::uuid, 'DELAY', 'wait ' || g, 'COMPLETED' FROM generate_series(1, 2) g`,
      );
      return row?.id as string;
    };
    const oldAgain = [await execution(again, 50, 40), await execution(again, 45, 35)];
    const oldOnce = await execution(once, 60, 31);
    const recent = await execution(again, 40, 5); // started long ago, finished within the retention
    const waiting = await execution(once, 90, null);
    // A message the re-entrant execution sent keeps its row and loses the link.
    const [email] = await queryRows<{ id: string }>(
      pool,
      sql`INSERT INTO emails (id, project_id, contact_id, content_type, message_id, to_email, from_email, subject, html, text,
                              status, workflow_execution_id)
          VALUES (uuidv7_compat(), ${p}::uuid, ${contact?.id}::uuid, 'TRANSACTIONAL', '<runs@example.com>', 'runs@example.com',
                  'app@example.com', 'Hi', '<p>Hi</p>', 'Hi', 'DELIVERED', ${oldAgain[0]}::uuid)
          RETURNING id`,
    );

    const run = await applyRetention(pool, { batch: 2 });
    expect(run.executionsExpired).toBe(3);
    expect(run.stepRunsDeleted).toBe(6);
    expect(run.largestStatement).toBeLessThanOrEqual(2);
    const state = async (id: string) =>
      (
        await queryRows(
          pool,
          sql`SELECT x.status, x.context, x.history_cleared AS cleared,
                     (SELECT count(*)::int FROM workflow_step_runs r WHERE r.execution_id = x.id) AS steps
              FROM workflow_executions x WHERE x.id = ${id}::uuid`,
        )
      )[0];
    for (const id of oldAgain) expect(await state(id)).toBeUndefined();
    expect(await count(sql`workflow_step_runs WHERE execution_id = ANY(${oldAgain}::uuid[])`)).toBe(0);
    expect(await state(oldOnce)).toEqual({ status: 'COMPLETED', context: {}, cleared: true, steps: 0 });
    expect(await state(recent)).toMatchObject({ context: { event: { plan: 'pro' } }, cleared: false, steps: 2 });
    expect(await state(waiting)).toMatchObject({ status: 'WAITING', cleared: false, steps: 2 });
    expect(await count(sql`emails WHERE id = ${email?.id}::uuid AND workflow_execution_id IS NULL`)).toBe(1);

    // The kept row still says the contact went through the workflow (no re-entry), without its steps.
    const detail = await api(pigeon, who.auth).workflows.getExecution({ params: { id: once, executionId: oldOnce } });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ id: oldOnce, status: 'COMPLETED', context: {}, steps: [] });
    expect((await applyRetention(pool, { batch: 2 })).executionsExpired).toBe(0);
  });
});

describe('retention of event webhook deliveries', () => {
  it('deletes finished deliveries with the events, after 30 days at the latest; pending ones stay', async () => {
    const shortLived = await newProject(pigeon);
    const onDefaults = await newProject(pigeon);
    expect((await patch(shortLived, { retention: { eventsDays: 10 } })).status).toBe(200);
    const endpointOf = async (who: { auth: Record<string, string> }) => {
      const res = await api(pigeon, who.auth).webhookEndpoints.create({
        body: { url: 'https://hooks.example.com/pigeon', eventTypes: ['order.*'] },
      });
      expect(res.status).toBe(201);
      return bodyOf(res, 201).id;
    };
    const PAYLOAD = JSON.stringify({
      type: 'order.paid',
      timestamp: new Date().toISOString(),
      data: {
        contact: { id: '01a222ba-0b11-72bb-a8bc-02928a95567c', email: 'buyer@example.com' },
        data: { total: 42 },
      },
    });
    /** A delivery made `days` ago in the given state; answers its id. */
    const delivery = async (endpointId: string, days: number, state: string) =>
      (
        await queryRows<{ id: string }>(
          pool,
          sql`INSERT INTO webhook_messages (id, webhook_id, project_id, endpoint_id, event_type, payload, status, next_attempt_at, created_at)
              SELECT uuidv7_compat(), 'msg_' || md5(random()::text), e.project_id, e.id, 'order.paid', ${PAYLOAD}::jsonb,
                     ${state}, CASE WHEN ${state} = 'PENDING' THEN now() + interval '1 hour' END, t
              FROM webhook_endpoints e, (SELECT now() - make_interval(days => ${days}::int) AS t) at
              WHERE e.id = ${endpointId}::uuid
              RETURNING id::text`,
        )
      )[0]?.id as string;
    const shortEndpoint = await endpointOf(shortLived);
    const defaultEndpoint = await endpointOf(onDefaults);
    const expired = [
      await delivery(shortEndpoint, 12, 'SUCCEEDED'),
      await delivery(shortEndpoint, 12, 'SUCCEEDED'),
      await delivery(shortEndpoint, 11, 'FAILED'),
      await delivery(defaultEndpoint, 31, 'SUCCEEDED'),
      await delivery(defaultEndpoint, 40, 'FAILED'),
    ];
    const kept = [
      await delivery(shortEndpoint, 12, 'PENDING'),
      await delivery(shortEndpoint, 9, 'SUCCEEDED'),
      await delivery(defaultEndpoint, 29, 'SUCCEEDED'),
      await delivery(defaultEndpoint, 60, 'PENDING'),
    ];
    const left = async (ids: string[]) =>
      (
        await queryRows<{ n: number }>(
          pool,
          sql`SELECT count(*)::int AS n FROM webhook_messages WHERE id = ANY(${ids}::uuid[])`,
        )
      )[0]?.n;

    const run = await applyRetention(pool, { batch: 2 });
    expect(run.deliveriesDeleted).toBe(expired.length);
    expect(run.largestStatement).toBeLessThanOrEqual(2);
    expect(await left(expired)).toBe(0);
    expect(await left(kept)).toBe(kept.length);
    const listed = await api(pigeon, shortLived.auth).webhookEndpoints.deliveries({ params: { id: shortEndpoint } });
    expect(listed.status).toBe(200);
    expect(
      bodyOf(listed, 200)
        .data.map((d) => d.id)
        .sort(),
    ).toEqual(kept.slice(0, 2).sort());
    expect((await applyRetention(pool, { batch: 2 })).deliveriesDeleted).toBe(0);
  });
});
