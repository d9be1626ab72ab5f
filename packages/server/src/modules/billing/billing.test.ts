import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, newProject, signUp, uniqueEmail } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { campaignToAll } from '../../../test/campaigns.js';
import { startCli } from '../../../test/cli.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { buildWorkflow, createTemplate, executionDetail, executionsOf, track, until } from '../../../test/workflows.js';
import { queryRows, sql } from '../../db/query.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  // The local outbox: domains are verified on creation, mail is written to files.
  pigeon = await startTestPigeon({
    env: { CAMPAIGN_DISPATCH_INTERVAL_MS: '100', CHANGE_FEED_POLL_MS: '20', WORKFLOW_POLL_MS: '50' },
  });
});
afterAll(async () => {
  await pigeon?.stop();
});

let domains = 0;
/** A fresh project with a verified sender domain (the outbox verifies at once). */
async function sender(p: TestPigeon = pigeon) {
  const setup = await newProject(p);
  const domain = `billing${++domains}-${process.pid}.example.com`;
  const created = await api(p, setup.auth).domains.create({ body: { domain } });
  expect(created.status === 201 && created.body.status, JSON.stringify(created.body)).toBe('verified');
  return { ...setup, from: `hello@${domain}` };
}
type Sender = Awaited<ReturnType<typeof sender>>;

/** The billing routes of a sender's project, as `headers` (the secret key unless told) see them. */
const billing = (s: Sender, headers: Record<string, string> = s.auth) => api(pigeon, headers).billing;
const ofProject = (s: Sender) => ({ params: { id: s.project.id } });

async function setLimits(
  s: Sender,
  body: { transactional?: number | null; campaigns?: number | null; workflows?: number | null },
) {
  const res = await billing(s).setLimits({ ...ofProject(s), body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return bodyOf(res, 200);
}

/** Anything that serves Pigeon's API: the in-process one, or another process by its URL. */
type Server = Pick<TestPigeon, 'url'>;

async function consumption(s: Sender, p: Server = pigeon) {
  const res = await api(p, s.auth).billing.consumption(ofProject(s));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return bodyOf(res, 200);
}

const send = (s: Sender, to: string | string[], p: Server = pigeon) =>
  api(p, s.auth).emails.send({ body: { to, subject: 'Hi', body: '<p>Hello</p>', from: s.from } });

const emailCount = async (s: Sender) =>
  Number(
    (await queryRows(pigeon.deps.db.pool, sql`SELECT count(*) FROM emails WHERE project_id = ${s.project.id}`))[0]
      ?.count,
  );

const nextMonth = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
};

describe('billing limits', () => {
  it('starts with no caps; PUT sets some, keeps the others, and null removes one', async () => {
    const s = await sender();
    const initial = await billing(s).getLimits(ofProject(s));
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({ transactional: null, campaigns: null, workflows: null });
    expect(await setLimits(s, { transactional: 100, campaigns: 5000 })).toEqual({
      transactional: 100,
      campaigns: 5000,
      workflows: null,
    });
    expect(await setLimits(s, { campaigns: null, workflows: 0 })).toEqual({
      transactional: 100,
      campaigns: null,
      workflows: 0,
    });
    // The session of a member works as well as the secret key.
    const viaSession = await billing(s, { cookie: s.owner.cookie }).getLimits(ofProject(s));
    expect(viaSession.body).toEqual({ transactional: 100, campaigns: null, workflows: 0 });
  });

  it('refuses bad caps, other projects, public keys and members without the role, changing nothing', async () => {
    const s = await sender();
    await setLimits(s, { transactional: 10 });
    // Bad caps on purpose ('many' does not fit the contract's types).
    for (const body of [{ transactional: -1 }, { campaigns: 1.5 }, { workflows: 'many' }, {}]) {
      // untyped: wrong on purpose (limits the contract's types refuse)
      const res = await pigeon.request('PUT', `/users/@me/projects/${s.project.id}/billing-limits`, {
        headers: s.auth,
        body,
      });
      expectEnvelope(res, 422, 'VALIDATION_ERROR');
    }
    const other = await sender();
    expectEnvelope(await billing(s).getLimits(ofProject(other)), 404, 'NOT_FOUND');
    expectEnvelope(await billing(s).setLimits({ ...ofProject(other), body: { transactional: 1 } }), 404, 'NOT_FOUND');
    expectEnvelope(await billing(s, { cookie: s.owner.cookie }).consumption(ofProject(other)), 404, 'NOT_FOUND');
    const pk = { authorization: `Bearer ${s.project.publicKey}` };
    expectEnvelope(await billing(s, pk).getLimits(ofProject(s)), 401, 'INVALID_API_KEY');
    expectEnvelope(await billing(s, {}).getLimits(ofProject(s)), 401, 'UNAUTHORIZED');

    const member = await signUp(pigeon);
    const invited = await api(pigeon, { cookie: s.owner.cookie }).projects.inviteMember({
      params: { id: s.project.id },
      body: { email: member.user.email, role: 'MEMBER' },
    });
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    const asMember = billing(s, { cookie: member.cookie });
    expect((await asMember.getLimits(ofProject(s))).status).toBe(200);
    expectEnvelope(
      await asMember.setLimits({ ...ofProject(s), body: { transactional: 1000 } }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expect(bodyOf(await billing(s).getLimits(ofProject(s)), 200).transactional).toBe(10);
    // A project of the member's own is no way into this one.
    const own = await createProject(pigeon, member.cookie, 'Mine');
    expectEnvelope(
      await billing(s, { authorization: `Bearer ${own.secretKey}` }).getLimits(ofProject(s)),
      404,
      'NOT_FOUND',
    );
  });
});

describe('transactional cap', () => {
  it('counts every queued email; a send that would pass the cap is 403 and queues nothing', async () => {
    const s = await sender();
    await setLimits(s, { transactional: 3 });
    expect((await send(s, [uniqueEmail(), uniqueEmail()])).status).toBe(200);
    const before = await emailCount(s);
    const newcomer = uniqueEmail('newcomer');
    const refused = await send(s, [newcomer, uniqueEmail()]);
    const error = expectEnvelope(refused, 403, 'BILLING_LIMIT_EXCEEDED');
    expect(error.details).toEqual({
      category: 'transactional',
      limit: 3,
      used: 2,
      remaining: 1,
      requested: 2,
      resetsAt: nextMonth(),
    });
    expect(error.message).toContain('transactional');
    expect(error.message).toContain(nextMonth());
    expect(error.suggestion).toContain('billing-limits');
    // Nothing of the refused request stayed: no email, no new contact.
    expect(await emailCount(s)).toBe(before);
    const lookup = await api(pigeon, s.auth).contacts.lookup({ body: { emails: [newcomer] } });
    expect(JSON.stringify(lookup.body)).not.toMatch(/"exists":\s*true/);

    const usage = await consumption(s);
    expect(usage.transactional).toEqual({ used: 2, limit: 3, remaining: 1 });
    expect(usage.campaigns).toEqual({ used: 0, limit: null, remaining: null });
    expect(usage.resetsAt).toBe(nextMonth());
    expect(new Date(usage.periodStart).getUTCDate()).toBe(1);
    expect(usage.subscription).toBeNull();

    expect((await send(s, uniqueEmail())).status).toBe(200);
    expectEnvelope(await send(s, uniqueEmail()), 403, 'BILLING_LIMIT_EXCEEDED');
    expect((await consumption(s)).transactional).toEqual({ used: 3, limit: 3, remaining: 0 });
    // Raising the cap lets mail through again; removing it, without limit.
    await setLimits(s, { transactional: null });
    expect((await send(s, [uniqueEmail(), uniqueEmail()])).status).toBe(200);
    expect((await consumption(s)).transactional).toEqual({ used: 5, limit: null, remaining: null });
  });

  it('a cap of 0 stops all transactional mail; other categories are not affected', async () => {
    const s = await sender();
    await setLimits(s, { transactional: 0, campaigns: 1 });
    const error = expectEnvelope(await send(s, uniqueEmail()), 403, 'BILLING_LIMIT_EXCEEDED');
    expect(error.details).toMatchObject({ category: 'transactional', limit: 0, used: 0, remaining: 0 });
    expect(await emailCount(s)).toBe(0);
  });

  it('is exact with concurrent requests through two server processes on one database', async () => {
    // A second Pigeon as an operating-system process of its own (the built CLI), on the same database.
    const dataDir = mkdtempSync(join(tmpdir(), 'pigeon-billing-api-'));
    const other = startCli(['api'], {
      DATABASE_URL: pigeon.deps.db.url,
      PIGEON_DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      RATE_LIMIT_PER_MINUTE: '0',
    });
    try {
      const otherUrl = await other.ready;
      const viaOther = { url: otherUrl };
      const s = await sender();
      const cap = 25;
      await setLimits(s, { transactional: cap });
      // Two request streams, one per process, 20 sends each, all in flight together.
      const streams = [pigeon, viaOther].map((p: Server) =>
        Promise.all(Array.from({ length: 20 }, () => send(s, uniqueEmail('race'), p))),
      );
      const [first, second] = await Promise.all(streams);
      const results = [...(first ?? []), ...(second ?? [])];
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((st) => st === 200)).toHaveLength(cap);
      expect(statuses.filter((st) => st === 403)).toHaveLength(40 - cap);
      // Both processes accepted some: the race really ran through both.
      expect(second?.some((r) => r.status === 200)).toBe(true);
      expect(first?.some((r) => r.status === 200)).toBe(true);
      for (const r of results.filter((x) => x.status === 403)) expectEnvelope(r, 403, 'BILLING_LIMIT_EXCEEDED');
      expect(await emailCount(s)).toBe(cap);
      expect((await consumption(s, viaOther)).transactional).toEqual({ used: cap, limit: cap, remaining: 0 });
      // Without a cap the count is spread over counter shards, and still exact.
      await setLimits(s, { transactional: null });
      const uncapped = await Promise.all(
        [pigeon, viaOther].flatMap((p: Server) => Array.from({ length: 10 }, () => send(s, uniqueEmail('free'), p))),
      );
      expect(uncapped.every((r) => r.status === 200)).toBe(true);
      expect((await consumption(s)).transactional).toEqual({ used: cap + 20, limit: null, remaining: null });
      const [shards] = await queryRows<{ n: number }>(
        pigeon.deps.db.pool,
        sql`SELECT count(*)::int AS n FROM billing_usage WHERE project_id = ${s.project.id} AND category = 'transactional'`,
      );
      expect(shards?.n).toBeGreaterThan(1);
    } finally {
      other.child.kill('SIGTERM');
      await other.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('campaigns cap', () => {
  /** A DRAFT campaign to `recipients` new contacts of the project (sending `sendRate` a second, when given). */
  async function campaignFor(s: Sender, recipients: number, sendRate?: number) {
    const to = Array.from({ length: recipients }, () => uniqueEmail('audience'));
    return (await campaignToAll(pigeon, s, to, { sendRate })).campaign.id;
  }
  const campaigns = (s: Sender) => api(pigeon, s.auth).campaigns;
  const campaign = async (s: Sender, id: string) => bodyOf(await campaigns(s).get({ params: { id } }), 200);

  it('refuses a campaign larger than what is left before it starts; it stays a DRAFT and queues nothing', async () => {
    const s = await sender();
    await setLimits(s, { campaigns: 5 });
    const id = await campaignFor(s, 6);
    const refused = await campaigns(s).send({ params: { id }, body: {} });
    const error = expectEnvelope(refused, 403, 'BILLING_LIMIT_EXCEEDED');
    expect(error.details).toMatchObject({ category: 'campaigns', limit: 5, used: 0, remaining: 5, requested: 6 });
    expect(await campaign(s, id)).toMatchObject({ status: 'DRAFT', totalRecipients: 0 });
    expect(await emailCount(s)).toBe(0);
    expect((await consumption(s)).campaigns).toEqual({ used: 0, limit: 5, remaining: 5 });

    await setLimits(s, { campaigns: 6 });
    const sent = await campaigns(s).send({ params: { id }, body: {} });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(await emailCount(s)).toBe(6);
    expect((await consumption(s)).campaigns).toEqual({ used: 6, limit: 6, remaining: 0 });
    // Test sends are campaign mail too.
    const test = await campaigns(s).test({ params: { id }, body: { email: uniqueEmail() } });
    expectEnvelope(test, 403, 'BILLING_LIMIT_EXCEEDED');
    expect(await emailCount(s)).toBe(6);
  });

  it('a scheduled campaign that would pass the cap when due goes back to DRAFT with nothing sent', async () => {
    const s = await sender();
    await setLimits(s, { campaigns: 2 });
    const id = await campaignFor(s, 3);
    const scheduled = await campaigns(s).send({
      params: { id },
      body: { scheduledFor: new Date(Date.now() + 300).toISOString() },
    });
    expect(scheduled.status, JSON.stringify(scheduled.body)).toBe(200);
    expect((await campaign(s, id)).status).toBe('SCHEDULED');
    const after = await until(
      () => campaign(s, id),
      (c) => c.status !== 'SCHEDULED',
    );
    expect(after).toMatchObject({ status: 'DRAFT', totalRecipients: 0 });
    expect(await emailCount(s)).toBe(0);
    expect((await consumption(s)).campaigns.used).toBe(0);
  });

  it('cancelling gives back the mail that will never be sent', async () => {
    const s = await sender();
    await setLimits(s, { campaigns: 10 });
    // One message a second: most are still queued when the campaign is cancelled.
    const id = await campaignFor(s, 8, 1);
    expect((await campaigns(s).send({ params: { id }, body: {} })).status).toBe(200);
    expect((await consumption(s)).campaigns.used).toBe(8);
    const cancelled = await campaigns(s).cancel({ params: { id } });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    const notSent = bodyOf(cancelled, 200).data.cancelled;
    expect(notSent).toBeGreaterThan(0);
    expect((await consumption(s)).campaigns.used).toBe(8 - notSent);
  });
});

describe('workflows cap', () => {
  it('a SEND_EMAIL step over the cap fails its execution with the reason; nothing is queued', async () => {
    const s = await sender();
    await setLimits(s, { workflows: 1 });
    const template = await createTemplate(pigeon, s.auth, {
      subject: 'Welcome',
      body: '<p>Welcome</p>',
      from: s.from,
      type: 'TRANSACTIONAL',
    });
    const wf = await buildWorkflow(pigeon, s.auth, {
      trigger: 'signed_up',
      steps: [{ key: 'mail', type: 'SEND_EMAIL', config: { templateId: template } }],
      transitions: [],
    });
    await track(pigeon, s.auth, uniqueEmail('first'), 'signed_up');
    await until(
      () => executionsOf(pigeon, s.auth, wf.id),
      (list) => list.length === 1 && list[0]?.status === 'COMPLETED',
    );
    await track(pigeon, s.auth, uniqueEmail('second'), 'signed_up');
    const executions = await until(
      () => executionsOf(pigeon, s.auth, wf.id),
      (list) => list.length === 2 && list.every((e) => e.status !== 'RUNNING'),
    );
    const statuses = executions.map((e) => e.status).sort();
    expect(statuses).toEqual(['COMPLETED', 'FAILED']);
    const failed = executions.find((e) => e.status === 'FAILED');
    const detail = await executionDetail(pigeon, s.auth, wf.id, failed?.id ?? '');
    expect(detail.steps[0]).toMatchObject({ status: 'FAILED', output: { reason: 'BILLING_LIMIT_EXCEEDED' } });
    expect(detail.steps[0]?.error).toContain('workflows limit of 1');
    expect(await emailCount(s)).toBe(1);
    expect((await consumption(s)).workflows).toEqual({ used: 1, limit: 1, remaining: 0 });
  });
});
