import { LIST_TOTAL_CAP } from '@pigeon/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject, outboxMessages } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { insertSentEmails, setEmailStatus } from '../../../test/fixtures/email-states.js';
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

const send = (sender: Sender, body: { to: string; sendAt?: string }) => {
  const { from, ...auth } = sender;
  return api(pigeon, auth).emails.send({ body: { from, subject: 'Hi', body: '<p>Hi</p>', ...body } });
};
/** The one email a send queued. */
const queued = (res: Awaited<ReturnType<typeof send>>) => {
  const [email] = bodyOf(res, 200).data.emails;
  if (!email) throw new Error('nothing queued');
  return email;
};

/** A project whose domain the local outbox verified at once; `auth` also carries the sender for `send`. */
async function setup() {
  const project = await newProject(pigeon);
  const name = `resource${++domains}-${process.pid}.example`;
  const domain = await api(pigeon, project.auth).domains.create({ body: { domain: name } });
  expect(domain.status, JSON.stringify(domain.body)).toBe(201);
  return { ...project, sender: { ...project.auth, from: `hello@${name}` }, domain: name };
}

const emailOf = async (auth: Auth, id: string) =>
  bodyOf(await api(pigeon, auth).sentEmails.get({ params: { id } }), 200);
const inOutbox = (id: string) => outboxMessages(pigeon).some((raw) => raw.includes(`<${id}@`));

describe("an email's page", () => {
  it('shows its copies, reply-to, tags and content (HTML, text, headers, attachments without their bytes)', async () => {
    const { auth, sender } = await setup();
    const { from, ...keyAuth } = sender;
    const res = await api(pigeon, keyAuth).emails.send({
      body: {
        from,
        to: 'main@example.com',
        cc: ['copy@example.com'],
        bcc: [{ email: 'hidden@example.com', name: 'Hidden' }],
        reply: 'answers@example.com',
        tags: { kind: 'receipt' },
        headers: { 'X-Order': '42' },
        subject: 'Your receipt',
        body: '<p>Thanks</p>',
        attachments: [
          { filename: 'r.txt', content: Buffer.from('receipt').toString('base64'), contentType: 'text/plain' },
        ],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = queued(res).email;
    const email = await emailOf(auth, id);
    expect(email).toMatchObject({
      cc: [{ email: 'copy@example.com', name: null }],
      bcc: [{ email: 'hidden@example.com', name: 'Hidden' }],
      replyTo: 'answers@example.com',
      tags: { kind: 'receipt' },
      content: {
        html: expect.stringContaining('<p>Thanks</p>'),
        headers: { 'X-Order': '42' },
        attachments: [{ filename: 'r.txt', contentType: 'text/plain', size: 7 }],
      },
    });
    expect(email.content?.text).toContain('Thanks');
    expect(JSON.stringify(email)).not.toContain(Buffer.from('receipt').toString('base64'));
  });
});

describe('queueing one email again', () => {
  it("queues a FAILED email again and it is sent; refuses one that is not FAILED, and another project's", async () => {
    const { auth, sender } = await setup();
    const sent = queued(await send(sender, { to: 'retry@example.com' }));
    const emails = api(pigeon, auth).sentEmails;
    await until(
      async () => (await emailOf(auth, sent.email)).status,
      (status) => status === 'SENT',
    );
    expectEnvelope(await emails.requeue({ params: { id: sent.email }, body: {} }), 409, 'CONFLICT');
    await setEmailStatus(pigeon.deps.db.pool, sent.email, 'FAILED');
    const other = api(pigeon, (await newProject(pigeon)).auth).sentEmails;
    expectEnvelope(await other.requeue({ params: { id: sent.email }, body: {} }), 404, 'NOT_FOUND');
    const again = await emails.requeue({ params: { id: sent.email }, body: {} });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect((await emailOf(auth, sent.email)).status).toMatch(/QUEUED|SENDING|SENT/);
    await until(
      async () => (await emailOf(auth, sent.email)).status,
      (status) => status === 'SENT',
    );
  });
});

describe('scheduled sends', () => {
  it('delivers a scheduled email at its time and never one cancelled before', async () => {
    const { auth, sender } = await setup();
    const sendAt = new Date(Date.now() + 2_500).toISOString();
    const kept = await send(sender, { to: 'later@example.com', sendAt });
    const cancelled = await send(sender, { to: 'never@example.com', sendAt });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    const keptId = queued(kept).email;
    const cancelledId = queued(cancelled).email;

    expect(await emailOf(auth, keptId)).toMatchObject({ status: 'SCHEDULED', sendAt, sentAt: null });
    const emails = api(pigeon, auth).sentEmails;
    const cancel = await emails.cancel({ params: { id: cancelledId }, body: {} });
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
    expect(cancel.body).toMatchObject({ id: cancelledId, status: 'CANCELLED' });

    await new Promise((r) => setTimeout(r, 1_000));
    expect(inOutbox(keptId)).toBe(false); // not before its time
    const sent = await until(
      () => emailOf(auth, keptId),
      (e) => e.status === 'SENT',
    );
    expect(Date.parse(sent.sentAt ?? '')).toBeGreaterThanOrEqual(Date.parse(sendAt));
    expect(inOutbox(keptId)).toBe(true);
    expect(sent.timeline.map((t) => t.type)).toEqual(['email.scheduled', 'email.sent']);

    await new Promise((r) => setTimeout(r, 1_000));
    expect(inOutbox(cancelledId)).toBe(false);
    const gone = await emailOf(auth, cancelledId);
    expect(gone.status).toBe('CANCELLED');
    expect(gone.timeline.map((t) => t.type)).toEqual(['email.scheduled', 'email.cancelled']);

    // Handed to the transport: too late to cancel.
    expectEnvelope(await emails.cancel({ params: { id: keptId }, body: {} }), 409, 'CONFLICT');
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
    expect(bodyOf(await api(pigeon, auth).sentEmails.list(), 200).total).toBe(0);
  });
});

describe('GET /emails', () => {
  it('filters by contact, status and time, pages with a cursor, and keeps to the project', async () => {
    const { auth, sender } = await setup();
    const before = new Date().toISOString();
    const emails = api(pigeon, auth).sentEmails;
    const list = async (query: Parameters<typeof emails.list>[0] = {}) => bodyOf(await emails.list(query), 200);
    const ids: string[] = [];
    for (const to of ['a@example.com', 'b@example.com', 'a@example.com']) {
      ids.push(queued(await send(sender, { to })).email);
    }
    const scheduled = queued(
      await send(sender, { to: 'c@example.com', sendAt: new Date(Date.now() + 3_600_000).toISOString() }),
    );
    await until(
      async () => (await list({ query: { status: 'SENT' } })).total,
      (n) => n === 3,
    );
    const all = await list({ query: { limit: 2 } });
    expect(all).toMatchObject({ total: 4, hasMore: true });
    const rest = await list({ query: { limit: 2, cursor: all.cursor ?? 'no cursor' } });
    const paged = [...all.data, ...rest.data].map((e) => e.id);
    expect(paged).toEqual([scheduled.email, ...[...ids].reverse()]);
    expect(rest.hasMore).toBe(false);

    const contactA = (await emailOf(auth, ids[0] ?? 'none sent')).contactId ?? 'no contact';
    const ofA = await list({ query: { contactId: contactA } });
    expect(ofA.data.map((e) => e.id)).toEqual([ids[2], ids[0]]);
    const toA = await list({ query: { to: 'A@Example.com' } });
    expect(toA.data.map((e) => e.id)).toEqual([ids[2], ids[0]]);
    expect((await list({ query: { source: 'TRANSACTIONAL' } })).total).toBe(4);
    expect((await list({ query: { source: 'CAMPAIGN' } })).total).toBe(0);
    const sched = await list({ query: { status: 'SCHEDULED' } });
    expect(sched.data.map((e) => e.id)).toEqual([scheduled.email]);
    const none = await list({ query: { before } });
    expect(none.total).toBe(0);
    // A status that does not exist, on purpose.
    // untyped: wrong on purpose (a status not in the enum)
    expectEnvelope(await pigeon.request('GET', '/emails?status=LOST', { headers: auth }), 422, 'VALIDATION_ERROR');

    const other = api(pigeon, (await newProject(pigeon)).auth).sentEmails;
    expectEnvelope(await other.get({ params: { id: ids[0] ?? 'none sent' } }), 404, 'NOT_FOUND');
    expectEnvelope(await other.cancel({ params: { id: scheduled.email }, body: {} }), 404, 'NOT_FOUND');
    expect(bodyOf(await other.list(), 200).total).toBe(0);
    expect((await emailOf(auth, scheduled.email)).status).toBe('SCHEDULED'); // the other project changed nothing
  });

  it('counts a long list only up to LIST_TOTAL_CAP on its first page, and says when it stopped there', async () => {
    const { project, auth } = await newProject(pigeon);
    const emails = api(pigeon, auth).sentEmails;
    await insertSentEmails(pigeon.deps.db.pool, project.id, LIST_TOTAL_CAP - 1);
    expect(bodyOf(await emails.list({ query: { limit: 1 } }), 200)).toMatchObject({
      total: LIST_TOTAL_CAP - 1,
      totalCapped: false,
    });
    await insertSentEmails(pigeon.deps.db.pool, project.id, 2);
    const first = bodyOf(await emails.list({ query: { limit: 1 } }), 200);
    expect(first).toMatchObject({ total: LIST_TOTAL_CAP, totalCapped: true, hasMore: true });
    const next = bodyOf(await emails.list({ query: { limit: 1, cursor: first.cursor ?? 'no cursor' } }), 200);
    expect(next).toMatchObject({ total: 0, totalCapped: false, hasMore: true });
    expect(bodyOf(await emails.list({ query: { status: 'FAILED' } }), 200)).toMatchObject({
      total: 0,
      totalCapped: false,
    });
  });
});
