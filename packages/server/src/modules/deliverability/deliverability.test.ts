import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { eventNames, signUp } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { updateEmail } from '../../../test/fixtures/email-states.js';
import { deleteEventsNamed } from '../../../test/fixtures/event-log.js';
import { expectEnvelope } from '../../../test/helpers.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { until } from '../../../test/until.js';
import { queryRows, sql } from '../../db/query.js';
import { recordDeliveryFeedback } from './feedback.js';
import { emailIdOfReturnPath, returnPathFor } from './verp.js';

const BOUNCE_DOMAIN = 'bounces.pigeon.test';
const MAX_BYTES = 64 * 1024;
const FLOOD_LIMIT = 60;

const { pigeon, sink, dns } = await startMailingPigeon({
  BOUNCE_DOMAIN,
  INBOUND_SMTP_PORT: '0',
  INBOUND_SMTP_HOST: '127.0.0.1',
  INBOUND_SMTP_MAX_BYTES: String(MAX_BYTES),
  INBOUND_SMTP_MESSAGES_PER_MINUTE: String(FLOOD_LIMIT),
  HEALTH_MIN_SAMPLE: '5',
  CAMPAIGN_DISPATCH_INTERVAL_MS: '100',
});

type Sender = Awaited<ReturnType<typeof verifiedSender>>;
let recipientCounter = 0;
const recipient = () => `r${++recipientCounter}-${process.pid}@inbox.example`;

/** Sends one transactional email and waits until the sink has it; returns ids and its return path. */
async function sendOne(s: Sender, to = recipient()) {
  const res = await api(pigeon, s.auth).emails.send({
    body: { to, from: s.from, subject: 'Welcome', body: '<p>Hello</p>', subscribed: true },
  });
  expect(res.status).toBe(200);
  const [sent] = bodyOf(res, 200).data.emails;
  if (!sent) throw new Error('nothing sent');
  const messageId = `<${sent.email}@${s.domain}>`;
  await sink.waitFor(1);
  const message = await until(
    async () => sink.messages.find((m) => m.messageId === messageId),
    (m) => m !== undefined,
  );
  if (!message) throw new Error(`no message ${messageId} in the sink`);
  await until(
    async () => (await queryRows(pigeon.deps.db.pool, sql`SELECT status FROM emails WHERE id = ${sent.email}`))[0],
    (r) => r?.status === 'SENT',
  );
  return { emailId: sent.email, contactId: sent.contact.id, to, messageId, message };
}

/** A report fixture (written in the RFC formats) with the placeholders filled in. */
function fixture(name: string, values: { returnPath: string; recipient: string; from: string; messageId: string }) {
  return readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8')
    .replaceAll('{{RETURN_PATH}}', values.returnPath)
    .replaceAll('{{RECIPIENT}}', values.recipient)
    .replaceAll('{{FROM}}', values.from)
    .replaceAll('{{DOMAIN}}', values.from.split('@')[1] ?? '')
    .replaceAll('{{MESSAGE_ID}}', values.messageId);
}

/** Delivers raw mail to the inbound receiver over SMTP, as a reporting MTA would (null sender). */
async function deliverReport(to: string, raw: string) {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: pigeon.inboundSmtpPort,
    secure: false,
    ignoreTLS: true,
  });
  try {
    return await transport.sendMail({ envelope: { from: '', to: [to] }, raw });
  } finally {
    transport.close();
  }
}

async function smtpRefusal(to: string, raw: string): Promise<{ responseCode?: number; command?: string }> {
  try {
    await deliverReport(to, raw);
  } catch (err) {
    return err as { responseCode?: number; command?: string };
  }
  throw new Error('the receiver accepted the message');
}

const eventsOf = async (contactId: string, name: string) =>
  (
    await queryRows<{ data: Record<string, unknown> }>(
      pigeon.deps.db.pool,
      sql`SELECT data FROM events WHERE contact_id = ${contactId} AND name = ${name} ORDER BY id`,
    )
  ).map((r) => r.data);

const emailRow = async (id: string) =>
  (await queryRows(pigeon.deps.db.pool, sql`SELECT * FROM emails WHERE id = ${id}`))[0];

async function reportFor(sent: Awaited<ReturnType<typeof sendOne>>, s: Sender, name: string) {
  const raw = fixture(name, {
    returnPath: sent.message.from,
    recipient: sent.to,
    from: s.from,
    messageId: sent.messageId,
  });
  return deliverReport(sent.message.from, raw);
}

describe('outgoing mail', () => {
  it('carries a signed VERP return path and a DKIM-signed Feedback-ID; SMTP acceptance is sent and delivery', async () => {
    const s = await verifiedSender(pigeon, dns);
    const sent = await sendOne(s);
    expect(sent.message.from).toMatch(new RegExp(`^bounces\\+[0-9a-f]{52}@${BOUNCE_DOMAIN.replace(/\./g, '\\.')}$`));
    expect(emailIdOfReturnPath(sent.message.from, pigeon.deps.config.secrets.linkSigning, BOUNCE_DOMAIN)).toBe(
      sent.emailId,
    );
    const unfolded = sent.message.raw.replace(/\r?\n[ \t]+/g, ' ');
    expect(unfolded).toMatch(new RegExp(`^Feedback-ID: direct:${s.project.id}:transactional:pigeon\r?$`, 'm'));
    expect(/^DKIM-Signature:.*? h=([^;]+);/m.exec(unfolded)?.[1]?.toLowerCase()).toContain('feedback-id');
    expect(await eventNames(pigeon, sent.contactId)).toEqual(expect.arrayContaining(['email.sent', 'email.delivery']));
    const row = await emailRow(sent.emailId);
    expect(row?.sent_at).not.toBeNull();
    expect(row?.delivered_at).not.toBeNull();

    const custom = await api(pigeon, s.auth).emails.send({
      body: { to: recipient(), from: s.from, subject: 's', body: 'b', headers: { 'feedback-id': 'mine' } },
    });
    expect(expectEnvelope(custom, 422, 'VALIDATION_ERROR').errors).toEqual([
      expect.objectContaining({ field: 'headers.feedback-id', code: 'reserved_header' }),
    ]);
  });
});

describe('the inbound receiver', () => {
  it('records a DSN hard bounce: event with the diagnostic, suppression, unsubscription; later sends are skipped', async () => {
    const s = await verifiedSender(pigeon, dns);
    const sent = await sendOne(s);
    const accepted = await reportFor(sent, s, 'dsn-hard-bounce.eml');
    expect(accepted.response).toMatch(/^250/);

    const [bounce] = await eventsOf(sent.contactId, 'email.bounce');
    expect(bounce).toMatchObject({ emailId: sent.emailId, bounceType: 'hard', source: 'dsn', subject: 'Welcome' });
    expect(bounce?.diagnosticCode).toMatch(/^smtp; 550 5\.1\.1 .*User unknown/);
    expect(await emailRow(sent.emailId)).toMatchObject({ status: 'BOUNCED', bounced_at: expect.any(Date) });
    expect(await eventsOf(sent.contactId, 'contact.unsubscribed')).toEqual([
      { source: 'hard_bounce', reason: 'hard_bounce', emailId: sent.emailId },
    ]);
    const client = api(pigeon, s.auth);
    const contact = await client.contacts.get({ params: { id: sent.contactId } });
    expect(bodyOf(contact, 200).subscribed).toBe(false);

    const list = bodyOf(await client.suppressions.list(), 200);
    expect(list).toMatchObject({ total: 1, hasMore: false, cursor: null });
    expect(list.data).toEqual([
      {
        id: expect.any(String),
        email: sent.to,
        reason: 'hard_bounce',
        detail: expect.stringMatching(/5\.1\.1/),
        emailId: sent.emailId,
        createdAt: expect.any(String),
      },
    ]);

    // The same DSN again (a retrying MTA): accepted, nothing recorded twice.
    await reportFor(sent, s, 'dsn-hard-bounce.eml');
    expect(await eventsOf(sent.contactId, 'email.bounce')).toHaveLength(1);

    const again = await client.emails.send({
      body: { to: [sent.to, 'fine@inbox.example'], from: s.from, subject: 'Again', body: 'b' },
    });
    expect(again.status).toBe(200);
    expect(bodyOf(again, 200).data.skipped).toEqual([
      { contact: { id: sent.contactId, email: sent.to }, reason: 'suppressed', suppression: 'hard_bounce' },
    ]);
    expect(bodyOf(again, 200).data.emails.map((e) => e.contact.email)).toEqual(['fine@inbox.example']);

    const lifted = await client.suppressions.delete({ params: { id: list.data[0]?.id ?? 'none listed' } });
    expect(lifted.status).toBe(204);
    expect(bodyOf(await client.suppressions.list(), 200).total).toBe(0);
    const afterLift = await client.emails.send({
      body: { to: sent.to, from: s.from, subject: 'Back', body: 'b' },
    });
    expect(bodyOf(afterLift, 200).data).toMatchObject({ skipped: [], emails: [{ contact: { email: sent.to } }] });
  });

  it('records a delivered DSN as email.delivery once', async () => {
    const s = await verifiedSender(pigeon, dns);
    const sent = await sendOne(s);
    // The relay's 250 recorded the delivery already: the DSN is accepted and adds nothing.
    expect((await reportFor(sent, s, 'dsn-delivered.eml')).response).toMatch(/^250/);
    expect(await eventsOf(sent.contactId, 'email.delivery')).toHaveLength(1);
    // Mail whose delivery was not known yet (as with a relay that reports it later) gets it from the DSN.
    const later = await sendOne(s);
    await deleteEventsNamed(pigeon.deps.db.pool, later.contactId, 'email.delivery');
    await updateEmail(pigeon.deps.db.pool, later.emailId, sql`delivered_at = NULL`);
    await reportFor(later, s, 'dsn-delivered.eml');
    expect(await eventsOf(later.contactId, 'email.delivery')).toEqual([
      expect.objectContaining({ emailId: later.emailId, source: 'dsn', detail: expect.stringMatching(/^smtp; 250/) }),
    ]);
    expect((await emailRow(later.emailId))?.delivered_at).not.toBeNull();
  });

  it('records a delayed DSN as a soft bounce without suppressing', async () => {
    const s = await verifiedSender(pigeon, dns);
    const sent = await sendOne(s);
    await reportFor(sent, s, 'dsn-soft-bounce.eml');
    const [bounce] = await eventsOf(sent.contactId, 'email.bounce');
    expect(bounce).toMatchObject({ bounceType: 'soft', source: 'dsn' });
    expect(bounce?.diagnosticCode).toMatch(/452 4\.2\.2/);
    expect((await emailRow(sent.emailId))?.status).toBe('SENT');
    expect(bodyOf(await api(pigeon, s.auth).suppressions.list(), 200).total).toBe(0);
    expect(await eventsOf(sent.contactId, 'contact.unsubscribed')).toEqual([]);
  });

  it('records an ARF complaint: email.complaint, suppression and unsubscription', async () => {
    const s = await verifiedSender(pigeon, dns);
    const sent = await sendOne(s);
    await reportFor(sent, s, 'arf-complaint.eml');
    expect(await eventsOf(sent.contactId, 'email.complaint')).toEqual([
      expect.objectContaining({ emailId: sent.emailId, feedbackType: 'abuse', source: 'arf' }),
    ]);
    expect(await emailRow(sent.emailId)).toMatchObject({ status: 'COMPLAINED', complained_at: expect.any(Date) });
    const list = await api(pigeon, s.auth).suppressions.list({ query: { email: sent.to } });
    expect(bodyOf(list, 200).data).toMatchObject([{ email: sent.to, reason: 'complaint', detail: 'abuse' }]);
    expect(await eventsOf(sent.contactId, 'contact.unsubscribed')).toEqual([
      { source: 'complaint', reason: 'complaint', emailId: sent.emailId },
    ]);
  });

  it('refuses other recipients, forged tokens, unknown emails, non-reports and huge messages, recording nothing', async () => {
    const s = await verifiedSender(pigeon, dns);
    const sent = await sendOne(s);
    const raw = fixture('dsn-hard-bounce.eml', {
      returnPath: sent.message.from,
      recipient: sent.to,
      from: s.from,
      messageId: sent.messageId,
    });

    for (const to of [
      `postmaster@${BOUNCE_DOMAIN}`,
      'someone@elsewhere.example',
      tamperLastTokenChar(sent.message.from),
    ]) {
      const refused = await smtpRefusal(to, raw);
      expect(refused).toMatchObject({ responseCode: 550, command: 'RCPT TO' });
    }
    const forgedForOther = returnPathFor(randomUUID(), 'not-the-secret-'.repeat(3), BOUNCE_DOMAIN);
    expect(await smtpRefusal(forgedForOther, raw)).toMatchObject({ responseCode: 550, command: 'RCPT TO' });

    const unknownEmail = returnPathFor(randomUUID(), pigeon.deps.config.secrets.linkSigning, BOUNCE_DOMAIN);
    expect(await smtpRefusal(unknownEmail, raw)).toMatchObject({ responseCode: 550, command: 'DATA' });

    const notAReport = 'From: someone@elsewhere.example\r\nSubject: hello\r\n\r\nJust a reply to your newsletter.\r\n';
    expect(await smtpRefusal(sent.message.from, notAReport)).toMatchObject({ responseCode: 550, command: 'DATA' });
    const malformed = raw.replace(/Action: failed/, 'Action failed').replace(/Status: 5\.1\.1/, 'Status: five');
    expect(await smtpRefusal(sent.message.from, malformed)).toMatchObject({ responseCode: 550, command: 'DATA' });

    const notSpam = fixture('arf-complaint.eml', {
      returnPath: sent.message.from,
      recipient: sent.to,
      from: s.from,
      messageId: sent.messageId,
    }).replace('Feedback-Type: abuse', 'Feedback-Type: not-spam');
    expect(await smtpRefusal(sent.message.from, notSpam)).toMatchObject({ responseCode: 550, command: 'DATA' });

    const huge = `${raw}\n${'x'.repeat(76)}\n`.repeat(Math.ceil(MAX_BYTES / raw.length) + 1);
    expect(await smtpRefusal(sent.message.from, huge)).toMatchObject({ responseCode: 552 });

    expect(await eventsOf(sent.contactId, 'email.bounce')).toEqual([]);
    expect(await eventsOf(sent.contactId, 'email.complaint')).toEqual([]);
    expect((await emailRow(sent.emailId))?.bounced_at).toBeNull();
    expect(bodyOf(await api(pigeon, s.auth).suppressions.list(), 200).total).toBe(0);

    // Still up: the real report is accepted afterwards.
    expect((await deliverReport(sent.message.from, raw)).response).toMatch(/^250/);
    expect(await eventsOf(sent.contactId, 'email.bounce')).toHaveLength(1);
  });
});

describe('feedback at delivery and through recordDeliveryFeedback', () => {
  it('treats a 5xx at delivery as a hard bounce that suppresses the address', async () => {
    const s = await verifiedSender(pigeon, dns);
    sink.failNext(550);
    const to = recipient();
    const client = api(pigeon, s.auth);
    const [queued] = bodyOf(await client.emails.send({ body: { to, from: s.from, subject: 'x', body: 'b' } }), 200).data
      .emails;
    const emailId = queued?.email ?? 'nothing queued';
    const row = await until(
      () => emailRow(emailId),
      (r) => r?.status === 'BOUNCED',
    );
    expect(row?.status).toBe('BOUNCED');
    const list = await until(
      async () => bodyOf(await client.suppressions.list(), 200),
      (b) => b.total === 1,
    );
    expect(list.data).toMatchObject([{ email: to, reason: 'hard_bounce', emailId }]);
    const [bounce] = await eventsOf(queued?.contact.id ?? 'nothing queued', 'email.bounce');
    expect(bounce).toMatchObject({
      bounceType: 'hard',
      source: 'smtp',
      reason: expect.stringMatching(/Mailbox unavailable/),
    });
  });

  it('records delivery, soft and hard bounces and complaints idempotently, for any caller (e.g. SNS)', async () => {
    const s = await verifiedSender(pigeon, dns);
    const sent = await sendOne(s);
    const deps = pigeon.deps;
    expect(await recordDeliveryFeedback(deps, randomUUID(), { kind: 'delivery', source: 'sns' })).toBeUndefined();
    // SMTP acceptance already recorded the delivery: an SNS Delivery notification adds nothing.
    expect(await recordDeliveryFeedback(deps, sent.emailId, { kind: 'delivery', source: 'sns' })).toMatchObject({
      recorded: false,
    });
    const soft = { kind: 'bounce', bounceType: 'soft', diagnostic: '452 4.2.2 mailbox full', source: 'sns' } as const;
    expect(await recordDeliveryFeedback(deps, sent.emailId, soft)).toMatchObject({ recorded: true, suppressed: false });
    const hard = { kind: 'bounce', bounceType: 'hard', diagnostic: 'smtp; 550 5.1.1 unknown', source: 'sns' } as const;
    expect(await recordDeliveryFeedback(deps, sent.emailId, hard)).toEqual({
      emailId: sent.emailId,
      projectId: s.project.id,
      recorded: true,
      suppressed: true,
      campaignsPaused: false,
    });
    expect(await recordDeliveryFeedback(deps, sent.emailId, hard)).toMatchObject({ recorded: false });
    const complaint = { kind: 'complaint', feedbackType: 'abuse', source: 'sns' } as const;
    expect(await recordDeliveryFeedback(deps, sent.emailId, complaint)).toMatchObject({
      recorded: true,
      suppressed: false, // already suppressed by the hard bounce: the first reason stays
    });
    expect((await eventsOf(sent.contactId, 'email.bounce')).map((e) => e.bounceType)).toEqual(['soft', 'hard']);
    expect(await eventsOf(sent.contactId, 'email.complaint')).toHaveLength(1);
    expect(await eventsOf(sent.contactId, 'contact.unsubscribed')).toHaveLength(1);
  });

  it('cancels at delivery mail queued for an address suppressed meanwhile (a campaign test send)', async () => {
    const s = await verifiedSender(pigeon, dns);
    const sent = await sendOne(s);
    await recordDeliveryFeedback(pigeon.deps, sent.emailId, {
      kind: 'complaint',
      feedbackType: 'abuse',
      source: 'arf',
    });
    const client = api(pigeon, s.auth);
    const created = await client.campaigns.create({
      body: { name: 'c', subject: 's', body: '<p>b</p>', from: s.from, audienceType: 'ALL' },
    });
    const before = sink.messages.filter((m) => m.to.includes(sent.to)).length;
    const test = await client.campaigns.test({
      params: { id: bodyOf(created, 201).data.id },
      body: { email: sent.to },
    });
    expect(test.status).toBe(200);
    const row = await until(
      async () =>
        (
          await queryRows(
            pigeon.deps.db.pool,
            sql`SELECT status, last_error FROM emails WHERE project_id = ${s.project.id} AND to_email = ${sent.to} AND source <> 'TRANSACTIONAL'`,
          )
        )[0],
      (r) => r?.status === 'CANCELLED',
    );
    expect(row).toEqual({ status: 'CANCELLED', last_error: 'suppressed: complaint' });
    expect(sink.messages.filter((m) => m.to.includes(sent.to))).toHaveLength(before);
  });

  it('leaves suppressed contacts out of a campaign audience', async () => {
    const s = await verifiedSender(pigeon, dns);
    const sent = await sendOne(s);
    await recordDeliveryFeedback(pigeon.deps, sent.emailId, {
      kind: 'complaint',
      feedbackType: 'abuse',
      source: 'arf',
    });
    // Re-subscribed by hand: still suppressed, so a TRANSACTIONAL campaign skips the address too.
    const client = api(pigeon, s.auth);
    await client.contacts.update({ params: { id: sent.contactId }, body: { subscribed: true } });
    const other = recipient();
    await client.contacts.create({ body: { email: other } });
    const created = await client.campaigns.create({
      body: { name: 'c', subject: 's', body: '<p>b</p>', from: s.from, audienceType: 'ALL', type: 'TRANSACTIONAL' },
    });
    const campaignId = bodyOf(created, 201).data.id;
    const started = await client.campaigns.send({ params: { id: campaignId }, body: {} });
    expect(bodyOf(started, 200).data.totalRecipients).toBe(1);
    const frozen = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT to_email FROM emails WHERE campaign_id = ${campaignId}`,
    );
    expect(frozen).toEqual([{ to_email: other }]);
  });
});

describe('project health', () => {
  it('pauses campaigns above the bounce threshold, tells the owner, keeps transactional mail, and resumes', async () => {
    const s = await verifiedSender(pigeon, dns);
    const sends = [];
    for (let i = 0; i < 5; i++) sends.push(await sendOne(s));
    const client = api(pigeon, s.auth);
    const owner = api(pigeon, { cookie: s.owner.cookie });
    const security = async () => bodyOf(await owner.projects.security({ params: { id: s.project.id } }), 200);
    expect((await security()).health).toMatchObject({ sample: 5, bounceRate: 0, campaignsPaused: false });

    const draft = await client.campaigns.create({
      body: { name: 'news', subject: 's', body: '<p>b {{unsubscribeUrl}}</p>', from: s.from, audienceType: 'ALL' },
    });
    const draftId = { id: bodyOf(draft, 201).data.id };
    const soon = new Date(Date.now() + 400).toISOString();
    const scheduled = await client.campaigns.send({ params: draftId, body: { scheduledFor: soon } });
    expect(bodyOf(scheduled, 200).data.status).toBe('SCHEDULED');

    const [first] = sends;
    if (!first) throw new Error('no send');
    await reportFor(first, s, 'dsn-hard-bounce.eml');
    const paused = await security();
    expect(paused.health).toMatchObject({
      sample: 5,
      bounceRate: 0.2,
      bounceThreshold: 0.05,
      complaintThreshold: 0.001,
      minimumSample: 5,
      windowSize: 1000,
      campaignsPaused: true,
      pausedAt: expect.any(String),
    });
    expect(paused.health.pausedReason).toMatch(/bounce rate 20\.00% over the last 5 messages is above 5\.00%/);
    expect(paused.recentSuspensions[0]?.reason).toMatch(/^Campaigns paused: bounce rate/);

    const told = await until(
      async () => sink.messages.find((m) => m.to.includes(s.owner.user.email) && /are paused/.test(m.raw)),
      (m) => m !== undefined,
    );
    expect(told?.raw).toMatch(/^Subject: Campaigns of Test project are paused/m);
    expect(told?.raw).toMatch(/bounce rate 20\.00%/);

    const refused = await client.campaigns.send({ params: draftId, body: {} });
    expectEnvelope(refused, 403, 'CAMPAIGNS_PAUSED');
    // The scheduled campaign waits while paused; transactional mail keeps flowing.
    await new Promise((r) => setTimeout(r, 700));
    const waiting = await client.campaigns.get({ params: draftId });
    expect(bodyOf(waiting, 200).status).toBe('SCHEDULED');
    await sendOne(s);

    // Only an OWNER or ADMIN lifts the pause.
    const memberUser = await signUp(pigeon);
    const project = { id: s.project.id };
    await owner.projects.inviteMember({ params: project, body: { email: memberUser.user.email, role: 'MEMBER' } });
    expectEnvelope(
      await api(pigeon, { cookie: memberUser.cookie }).projects.resumeCampaigns({ params: project }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expect((await security()).health.campaignsPaused).toBe(true);

    const member = await owner.projects.resumeCampaigns({ params: project });
    expect(member.status).toBe(200);
    expect(bodyOf(member, 200).health.campaignsPaused).toBe(false);
    const done = await until(
      async () => bodyOf(await client.campaigns.get({ params: draftId }), 200),
      (c) => c.status === 'SENT',
    );
    expect(done.status).toBe('SENT');
  });

  it('pauses on complaints above 0.1%, and not before the minimum sample', async () => {
    const s = await verifiedSender(pigeon, dns);
    const first = await sendOne(s);
    await reportFor(first, s, 'arf-complaint.eml');
    const owner = api(pigeon, { cookie: s.owner.cookie });
    const security = async () => bodyOf(await owner.projects.security({ params: { id: s.project.id } }), 200);
    expect((await security()).health).toMatchObject({ sample: 1, complaintRate: 1, campaignsPaused: false });
    const more = [];
    for (let i = 0; i < 4; i++) more.push(await sendOne(s));
    const last = more.at(-1);
    if (!last) throw new Error('no send');
    await reportFor(last, s, 'arf-complaint.eml');
    const health = (await security()).health;
    expect(health).toMatchObject({ sample: 5, complaintRate: 0.4, campaignsPaused: true });
    expect(health.pausedReason).toMatch(/complaint rate 40\.00%/);
  });
});

describe('GET/DELETE /suppressions', () => {
  it('pages newest first, is scoped to the project, and 404s on another project', async () => {
    const s = await verifiedSender(pigeon, dns);
    const other = await verifiedSender(pigeon, dns);
    const emails = [];
    for (let i = 0; i < 3; i++) {
      const sent = await sendOne(s);
      await recordDeliveryFeedback(pigeon.deps, sent.emailId, {
        kind: 'complaint',
        feedbackType: 'abuse',
        source: 'arf',
      });
      emails.push(sent.to);
    }
    const client = api(pigeon, s.auth);
    const first = bodyOf(await client.suppressions.list({ query: { limit: 2 } }), 200);
    expect(first).toMatchObject({ total: 3, hasMore: true });
    expect(first.data.map((d) => d.email)).toEqual([emails[2], emails[1]]);
    const second = bodyOf(
      await client.suppressions.list({ query: { limit: 2, cursor: first.cursor ?? 'no cursor' } }),
      200,
    );
    expect(second).toMatchObject({ total: 0, hasMore: false, cursor: null });
    expect(second.data.map((d) => d.email)).toEqual([emails[0]]);
    // The dashboard (session cookie + X-Project-Id) sees the same.
    const viaSession = await api(pigeon, { cookie: s.owner.cookie, 'x-project-id': s.project.id }).suppressions.list();
    expect(bodyOf(viaSession, 200).total).toBe(3);

    const otherClient = api(pigeon, other.auth);
    expect(bodyOf(await otherClient.suppressions.list(), 200).total).toBe(0);
    expectEnvelope(
      await otherClient.suppressions.delete({ params: { id: first.data[0]?.id ?? 'none listed' } }),
      404,
      'NOT_FOUND',
    );
    // A malformed id on purpose.
    expectEnvelope(
      await api(pigeon, s.auth).suppressions.delete({ params: { id: 'not-a-uuid' } }),
      422,
      'VALIDATION_ERROR',
    );
    expect(bodyOf(await client.suppressions.list(), 200).total).toBe(3);
  });
});

describe('mail floods', () => {
  it('refuses senders above the per-minute limit with 421 and stays up', async () => {
    const s = await verifiedSender(pigeon, dns);
    const sent = await sendOne(s);
    const raw = fixture('dsn-soft-bounce.eml', {
      returnPath: sent.message.from,
      recipient: sent.to,
      from: s.from,
      messageId: sent.messageId,
    });
    let refusal: { responseCode?: number } | undefined;
    for (let i = 0; i < FLOOD_LIMIT + 1 && !refusal; i++) {
      refusal = await deliverReport(sent.message.from, raw).then(
        () => undefined,
        (err) => err,
      );
    }
    expect(refusal).toMatchObject({ responseCode: 421 });
    // The receiver still answers connections.
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: pigeon.inboundSmtpPort, ignoreTLS: true });
    await expect(transport.verify()).resolves.toBe(true);
    transport.close();
  });
});

/** The return path with the character before `@` changed (always a different address). */
function tamperLastTokenChar(address: string): string {
  return address.replace(/(.)@/, (_, c: string) => `${c === '0' ? '1' : '0'}@`);
}
