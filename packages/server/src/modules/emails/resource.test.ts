import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject, outboxMessages } from '../../../test/accounts.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { until } from '../../../test/workflows.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon(); // the local outbox: every message handed over is a file
});
afterAll(() => pigeon?.stop());

type Auth = Record<string, string>;

type Sender = Auth & { from: string };
let domains = 0;

const send = (sender: Sender, body: Record<string, unknown>) => {
  const { from, ...auth } = sender;
  return pigeon.request('POST', '/v1/send', {
    headers: auth,
    body: { from, subject: 'Hi', body: '<p>Hi</p>', ...body },
  });
};

/** A project whose domain the local outbox verified at once; `auth` also carries the sender for `send`. */
async function setup() {
  const project = await newProject(pigeon);
  const name = `resource${++domains}-${process.pid}.example`;
  const domain = await pigeon.request('POST', '/domains', { headers: project.auth, body: { domain: name } });
  expect(domain.status, domain.text).toBe(201);
  return { ...project, sender: { ...project.auth, from: `hello@${name}` }, domain: name };
}

const emailOf = async (auth: Auth, id: string) =>
  (await pigeon.request('GET', `/emails/${id}`, { headers: auth })).body;
const inOutbox = (id: string) => outboxMessages(pigeon).some((raw) => raw.includes(`<${id}@`));

describe('scheduled sends', () => {
  it('delivers a scheduled email at its time and never one cancelled before', async () => {
    const { auth, sender } = await setup();
    const sendAt = new Date(Date.now() + 2_500).toISOString();
    const kept = await send(sender, { to: 'later@example.com', sendAt });
    const cancelled = await send(sender, { to: 'never@example.com', sendAt });
    expect(kept.status, kept.text).toBe(200);
    const keptId = kept.body.data.emails[0].email as string;
    const cancelledId = cancelled.body.data.emails[0].email as string;

    expect(await emailOf(auth, keptId)).toMatchObject({ status: 'SCHEDULED', sendAt, sentAt: null });
    const cancel = await pigeon.request('POST', `/emails/${cancelledId}/cancel`, { headers: auth, body: {} });
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.body).toMatchObject({ id: cancelledId, status: 'CANCELLED' });

    await new Promise((r) => setTimeout(r, 1_000));
    expect(inOutbox(keptId)).toBe(false); // not before its time
    const sent = await until(
      () => emailOf(auth, keptId),
      (e) => e.status === 'SENT',
    );
    expect(Date.parse(sent.sentAt)).toBeGreaterThanOrEqual(Date.parse(sendAt));
    expect(inOutbox(keptId)).toBe(true);
    expect(sent.timeline.map((t: { type: string }) => t.type)).toEqual(['email.scheduled', 'email.sent']);

    await new Promise((r) => setTimeout(r, 1_000));
    expect(inOutbox(cancelledId)).toBe(false);
    const gone = await emailOf(auth, cancelledId);
    expect(gone.status).toBe('CANCELLED');
    expect(gone.timeline.map((t: { type: string }) => t.type)).toEqual(['email.scheduled', 'email.cancelled']);

    // Handed to the transport: too late to cancel.
    expectEnvelope(
      await pigeon.request('POST', `/emails/${keptId}/cancel`, { headers: auth, body: {} }),
      409,
      'CONFLICT',
    );
  });

  it('refuses a sendAt beyond the documented horizon, naming the field, and queues nothing', async () => {
    const { auth, sender } = await setup();
    const far = new Date(Date.now() + 31 * 86_400_000).toISOString();
    const error = expectEnvelope(await send(sender, { to: 'far@example.com', sendAt: far }), 422, 'VALIDATION_ERROR');
    expect(error.errors?.[0]?.field).toBe('sendAt');
    const bad = expectEnvelope(
      await send(sender, { to: 'far@example.com', sendAt: 'tomorrow' }),
      422,
      'VALIDATION_ERROR',
    );
    expect(bad.errors?.[0]?.field).toBe('sendAt');
    expect((await pigeon.request('GET', '/emails', { headers: auth })).body.total).toBe(0);
  });
});

describe('GET /emails', () => {
  it('filters by contact, status and time, pages with a cursor, and keeps to the project', async () => {
    const { auth, sender } = await setup();
    const before = new Date().toISOString();
    const ids: string[] = [];
    for (const to of ['a@example.com', 'b@example.com', 'a@example.com']) {
      ids.push((await send(sender, { to })).body.data.emails[0].email);
    }
    const scheduled = (
      await send(sender, { to: 'c@example.com', sendAt: new Date(Date.now() + 3_600_000).toISOString() })
    ).body.data.emails[0];
    await until(
      async () => (await pigeon.request('GET', '/emails?status=SENT', { headers: auth })).body.total,
      (n) => n === 3,
    );
    const all = await pigeon.request('GET', '/emails?limit=2', { headers: auth });
    expect(all.body).toMatchObject({ total: 4, hasMore: true });
    const rest = await pigeon.request('GET', `/emails?limit=2&cursor=${all.body.cursor}`, { headers: auth });
    const paged = [...all.body.data, ...rest.body.data].map((e: { id: string }) => e.id);
    expect(paged).toEqual([scheduled.email, ...[...ids].reverse()]);
    expect(rest.body.hasMore).toBe(false);

    const contactA = (await pigeon.request('GET', `/emails/${ids[0]}`, { headers: auth })).body.contactId;
    const ofA = await pigeon.request('GET', `/emails?contactId=${contactA}`, { headers: auth });
    expect(ofA.body.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[0]]);
    const sched = await pigeon.request('GET', '/emails?status=SCHEDULED', { headers: auth });
    expect(sched.body.data.map((e: { id: string }) => e.id)).toEqual([scheduled.email]);
    const none = await pigeon.request('GET', `/emails?before=${encodeURIComponent(before)}`, { headers: auth });
    expect(none.body.total).toBe(0);
    expectEnvelope(await pigeon.request('GET', '/emails?status=LOST', { headers: auth }), 422, 'VALIDATION_ERROR');

    const other = await newProject(pigeon);
    expectEnvelope(await pigeon.request('GET', `/emails/${ids[0]}`, { headers: other.auth }), 404, 'NOT_FOUND');
    expectEnvelope(
      await pigeon.request('POST', `/emails/${scheduled.email}/cancel`, { headers: other.auth, body: {} }),
      404,
      'NOT_FOUND',
    );
    expect((await pigeon.request('GET', '/emails', { headers: other.auth })).body.total).toBe(0);
    expect((await emailOf(auth, scheduled.email)).status).toBe('SCHEDULED'); // the other project changed nothing
  });
});
