import { randomUUID } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { authenticate } from 'mailauth';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventNames, newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { insertSuppression } from '../../../test/fixtures/deliverability.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { receivedMessage } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { authPlain, openDialogue, type SmtpDialogue } from '../../../test/smtp-dialogue.js';
import { until } from '../../../test/until.js';
import { queryRows, sql } from '../../db/query.js';
import { isLoopback } from './auth.js';

const MAX_BYTES = 200 * 1024;
const RATE_LIMIT = 25;
const { pigeon, sink, dns } = await startMailingPigeon({
  SMTP_SUBMISSION_PORT: '0',
  SMTP_SUBMISSION_TLS_PORT: '0',
  SMTP_SUBMISSION_MAX_BYTES: String(MAX_BYTES),
  SMTP_SUBMISSION_AUTH_FAILURES: '3',
  RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
});
const port = pigeon.submissionPorts?.port ?? 0;
const dnsResolver = new Resolver();
dnsResolver.setServers([dns.address]);
const resolver = (name: string, rr: string) => dnsResolver.resolve(name, rr as 'TXT');
const tlsPort = pigeon.submissionPorts?.tlsPort ?? 0;

let source = 10;
/** Each test its own loopback source address: the AUTH failure limit is per address. */
const nextAddress = () => `127.0.0.${++source}`;

/** A dialogue logged in with `key` over STARTTLS (after EHLO). */
async function loggedIn(key: string, opts: { implicitTls?: boolean } = {}): Promise<SmtpDialogue> {
  const smtp = await openDialogue(opts.implicitTls ? tlsPort : port, {
    tls: opts.implicitTls,
    localAddress: nextAddress(),
  });
  expect((await smtp.say('EHLO client.test')).code).toBe(250);
  if (!opts.implicitTls) {
    expect((await smtp.starttls()).code).toBe(220);
    expect((await smtp.say('EHLO client.test')).code).toBe(250);
  }
  const auth = await smtp.say(authPlain(key));
  expect(auth).toMatchObject({ code: 235 });
  return smtp;
}

const messageId = () => `<${randomUUID()}@client.test>`;

function mime(
  from: string,
  id: string,
  extra: string[] = [],
  html = '<p>Hello <a href="https://example.org/x">there</a></p>',
) {
  return [
    `From: "Team" <${from}>`,
    'To: "Ada L" <ada@example.com>, bob@example.com',
    'Cc: carol@example.com',
    'Bcc: dave@example.com',
    'Subject: Over SMTP',
    `Message-ID: ${id}`,
    'X-Campaign-Ref: spring-42',
    ...extra,
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello there: https://example.org/x',
    '--b1',
    'Content-Type: text/html; charset=utf-8',
    '',
    html,
    '--b1--',
    '',
  ].join('\r\n');
}

/** One transaction: MAIL, every RCPT, DATA and the message; the reply to the message (or the first refusal). */
async function transaction(smtp: SmtpDialogue, from: string, to: string[], message: string) {
  const mail = await smtp.say(`MAIL FROM:<${from}>`);
  if (mail.code !== 250) return mail;
  for (const rcpt of to) expect((await smtp.say(`RCPT TO:<${rcpt}>`)).code).toBe(250);
  expect((await smtp.say('DATA')).code).toBe(354);
  return smtp.message(message);
}

const emailsWithMessageId = (id: string) =>
  queryRows<{ id: string; to_email: string; status: string; contact_id: string }>(
    pigeon.deps.db.pool,
    sql`SELECT id, to_email, status, contact_id FROM emails WHERE message_id = ${id} ORDER BY to_email`,
  );

describe('SMTP submission', () => {
  it('sends each envelope recipient its copy through the send path: To and Cc kept, Bcc dropped, DKIM-signed, tracked, events and GET /emails', async () => {
    const { project, auth, from, domain } = await verifiedSender(pigeon, dns);
    const smtp = await loggedIn(project.secretKey);
    const id = messageId();
    const to = ['ada@example.com', 'bob@example.com', 'carol@example.com', 'dave@example.com'];
    const answer = await transaction(smtp, from, to, mime(from, id));
    expect(answer.code).toBe(250);
    expect(answer.text).toMatch(/^2\.0\.0 Ok: queued as [0-9a-f-]{36} and 3 more$/);
    smtp.close();

    const rows = await emailsWithMessageId(id);
    expect(rows.map((r) => r.to_email)).toEqual(to);
    await until(
      () => emailsWithMessageId(id),
      (r) => r.every((e) => e.status === 'SENT'),
    );
    await until(
      () => sink.messages.filter((m) => m.messageId === id).length,
      (n) => n === 4,
    );
    const received = sink.messages.filter((m) => m.messageId === id);
    expect(received.map((m) => m.to).sort()).toEqual(to.map((t) => [t]));
    for (const m of received) {
      expect(m.raw).toMatch(/^To: "Ada L" <ada@example\.com>, bob@example\.com$/m);
      expect(m.raw).toMatch(/^Cc: carol@example\.com$/m);
      expect(m.raw).not.toMatch(/^Bcc:/im);
      expect(m.raw).toMatch(/^X-Campaign-Ref: spring-42$/m);
      const dkim = (await authenticate(m.raw, { ip: '127.0.0.1', helo: 'localhost', sender: from, resolver })).dkim
        .results[0];
      expect(dkim).toMatchObject({ signingDomain: domain, status: { result: 'pass' } });
      expect(m.raw).toMatch(/^Feedback-ID: direct:/m);
      expect(m.raw).toContain('Hello there: https://example.org/x'); // the text part as written
    }
    // Tracked (the project's mode is ENABLED): each copy's HTML carries its own pixel and click link.
    const [ada] = rows;
    const parsed = await simpleParser(received[0]?.raw ?? '');
    expect(parsed.html).toMatch(/<img src="http:\/\/localhost:\d+\/t\/o\/[^"]+\.gif"/);
    expect(parsed.html).toMatch(/<a href="http:\/\/localhost:\d+\/t\/c\/[^"]+">there<\/a>/);
    expect(parsed.text).toBe('Hello there: https://example.org/x');

    const client = api(pigeon, auth);
    const list = bodyOf(await client.sentEmails.list({ query: { to: 'ada@example.com' } }), 200);
    expect(list.data[0]).toMatchObject({
      id: ada?.id,
      subject: 'Over SMTP',
      from,
      fromName: 'Team',
      toName: 'Ada L',
    });
    const detail = bodyOf(await client.sentEmails.get({ params: { id: ada?.id ?? '' } }), 200);
    expect(detail.content?.html).toContain('/t/c/');
    expect(detail.content?.text).toBe('Hello there: https://example.org/x');
    expect(await eventNames(pigeon, ada?.contact_id ?? '')).toContain('email.sent');
  });

  it('refuses to relay anything without AUTH: MAIL, RCPT and DATA to a foreign domain get 530, nothing is stored', async () => {
    const before = sink.messages.length;
    for (const implicitTls of [false, true]) {
      const smtp = await openDialogue(implicitTls ? tlsPort : port, { tls: implicitTls, localAddress: nextAddress() });
      expect((await smtp.say('EHLO relay.test')).code).toBe(250);
      const mail = await smtp.say('MAIL FROM:<spammer@elsewhere.example>');
      expect(mail.code).toBe(530);
      expect(mail.text).toContain('5.7.0 Authentication required');
      expect((await smtp.say('RCPT TO:<victim@foreign.example>')).code).toBe(530);
      expect((await smtp.say('DATA')).code).toBe(530);
      smtp.close();
    }
    const rows = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT 1 FROM emails WHERE to_email = 'victim@foreign.example'`,
    );
    expect(rows).toEqual([]);
    expect(sink.messages.slice(before).filter((m) => m.to.includes('victim@foreign.example'))).toEqual([]);
  });

  it('takes AUTH only after STARTTLS', async () => {
    const { project } = await verifiedSender(pigeon, dns);
    const smtp = await openDialogue(port, { localAddress: nextAddress() });
    expect((await smtp.say('EHLO client.test')).text).toContain('STARTTLS');
    expect(await smtp.say(authPlain(project.secretKey))).toEqual({
      code: 538,
      text: 'Error: Must issue a STARTTLS command first',
    });
    await smtp.starttls();
    expect((await smtp.say('EHLO client.test')).text).toContain('AUTH PLAIN LOGIN');
    expect((await smtp.say(authPlain(project.secretKey))).code).toBe(235);
    smtp.close();
  });

  it('answers a wrong key, a public key and a malformed password alike (535 5.7.8), then 454 to the address past the limit', async () => {
    const { project } = await verifiedSender(pigeon, dns);
    const localAddress = nextAddress();
    const smtp = await openDialogue(tlsPort, { tls: true, localAddress });
    await smtp.say('EHLO client.test');
    const wrong = `sk_${'0'.repeat(64)}`;
    const answers = [
      await smtp.say(authPlain(wrong)),
      await smtp.say(authPlain(project.publicKey)),
      await smtp.say(authPlain('not a key', project.id)),
    ];
    expect(answers).toEqual(Array(3).fill({ code: 535, text: '5.7.8 Authentication credentials invalid' }));
    // AUTH LOGIN too, and now even the right key is refused from this address.
    expect((await smtp.say('AUTH LOGIN')).code).toBe(334);
    expect((await smtp.say(Buffer.from('pigeon').toString('base64'))).code).toBe(334);
    const throttled = await smtp.say(Buffer.from(project.secretKey).toString('base64'));
    expect(throttled).toEqual({
      code: 454,
      text: '4.7.0 Too many failed authentications from your address; try again later',
    });
    smtp.close();
    // Another address is not concerned.
    const other = await loggedIn(project.secretKey, { implicitTls: true });
    other.close();
  });

  it('stops a logged-in session from sending once its key is rotated', async () => {
    const { project, owner, from } = await verifiedSender(pigeon, dns);
    const smtp = await loggedIn(project.secretKey);
    const rotated = await api(pigeon, { cookie: owner.cookie }).users.regenerateKeys({ params: { id: project.id } });
    expect(rotated.status).toBe(200);
    const answer = await smtp.say(`MAIL FROM:<${from}>`);
    expect(answer).toEqual({
      code: 535,
      text: '5.7.8 Authentication credentials no longer valid (the key was rotated)',
    });
    smtp.close();
  });

  it('refuses a From on a domain the project has not verified, naming the domain (550 5.7.1); nothing is queued', async () => {
    const { project } = await newProject(pigeon);
    const smtp = await loggedIn(project.secretKey);
    const id = messageId();
    const answer = await transaction(
      smtp,
      'a@unverified.example',
      ['ada@example.com'],
      mime('a@unverified.example', id),
    );
    expect(answer.code).toBe(550);
    expect(answer.text).toMatch(/^5\.7\.1 Sender domain unverified\.example is not verified for this project/);
    expect(await emailsWithMessageId(id)).toEqual([]);
    smtp.close();
  });

  it('makes a retried Message-ID a no-op, and refuses another message under it', async () => {
    const { project, from } = await verifiedSender(pigeon, dns);
    const id = messageId();
    const first = await loggedIn(project.secretKey);
    const accepted = await transaction(first, from, ['ada@example.com'], mime(from, id));
    expect(accepted.text).toMatch(/^2\.0\.0 Ok: queued as ([0-9a-f-]{36})$/);
    first.close();
    // The client lost the 250 and sends it again, on a new connection.
    const again = await loggedIn(project.secretKey, { implicitTls: true });
    const repeated = await transaction(again, from, ['ada@example.com'], mime(from, id));
    expect(repeated).toEqual({ code: 250, text: accepted.text.replace('queued as', 'already accepted as') });
    const other = await transaction(again, from, ['ada@example.com'], mime(from, id, [], '<p>Something else</p>'));
    expect(other.code).toBe(550);
    expect(other.text).toContain(`5.7.0 Message-ID ${id} was already used for another message`);
    again.close();
    expect(await emailsWithMessageId(id)).toHaveLength(1);
  });

  it('adds a Message-ID and a Date to a message without them', async () => {
    const { project, from } = await verifiedSender(pigeon, dns);
    const smtp = await loggedIn(project.secretKey);
    const bare = [`From: ${from}`, 'To: ada@example.com', '', 'Just text, no subject.', ''].join('\r\n');
    const answer = await transaction(smtp, from, ['ada@example.com'], bare);
    const emailId = /queued as ([0-9a-f-]{36})/.exec(answer.text)?.[1] ?? '';
    smtp.close();
    const [row] = await queryRows<{ message_id: string; subject: string; html: string; text: string }>(
      pigeon.deps.db.pool,
      sql`SELECT message_id, subject, html, text FROM emails WHERE id = ${emailId}::uuid`,
    );
    expect(row).toMatchObject({ subject: '', html: '', text: 'Just text, no subject.' });
    expect(row?.message_id).toMatch(new RegExp(`^<[0-9a-f-]{36}@${from.split('@')[1]?.replace(/\./g, '\\.')}>$`));
    const message = await receivedMessage(sink, row?.message_id ?? '');
    expect(message.headers.get('date')).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
    expect(message.raw).toContain('Just text, no subject.');
  });

  it('takes 100 recipients of 1,000 (452 4.5.3 for the rest) and sends to those 100 only', async () => {
    const { project, from } = await verifiedSender(pigeon, dns);
    const smtp = await loggedIn(project.secretKey);
    expect((await smtp.say(`MAIL FROM:<${from}>`)).code).toBe(250);
    const codes = new Map<number, number>();
    let refusal = '';
    for (let i = 0; i < 1000; i++) {
      const answer = await smtp.say(`RCPT TO:<r${i}@example.com>`);
      codes.set(answer.code, (codes.get(answer.code) ?? 0) + 1);
      if (answer.code !== 250) refusal = answer.text;
    }
    expect(Object.fromEntries(codes)).toEqual({ 250: 100, 452: 900 });
    expect(refusal).toBe('4.5.3 Too many recipients: at most 100 per message, send the rest in another');
    expect((await smtp.say('DATA')).code).toBe(354);
    const id = messageId();
    expect((await smtp.message(mime(from, id))).code).toBe(250);
    smtp.close();
    const rows = await emailsWithMessageId(id);
    expect(rows).toHaveLength(100);
    expect(rows.every((r) => /^r\d{1,2}@example\.com$/.test(r.to_email))).toBe(true);
  });

  it('refuses a message over SMTP_SUBMISSION_MAX_BYTES (552), announced or not, and a huge header section', async () => {
    const { project, from } = await verifiedSender(pigeon, dns);
    const smtp = await loggedIn(project.secretKey);
    expect((await smtp.say('EHLO again.test')).text).toContain(`SIZE ${MAX_BYTES}`);
    const announced = await smtp.say(`MAIL FROM:<${from}> SIZE=${MAX_BYTES + 1}`);
    expect(announced.code).toBe(552);
    const id = messageId();
    const big = mime(from, id, [], `<p>${'x'.repeat(MAX_BYTES)}</p>`);
    const tooBig = await transaction(smtp, from, ['ada@example.com'], big);
    expect(tooBig).toEqual({ code: 552, text: `5.3.4 Message too big: at most ${MAX_BYTES} bytes` });
    const hugeHeaders = mime(
      from,
      id,
      Array.from({ length: 1200 }, (_, i) => `X-Filler-${i}: ${'y'.repeat(60)}`),
    );
    const refused = await transaction(smtp, from, ['ada@example.com'], hugeHeaders);
    expect(refused).toEqual({ code: 552, text: '5.3.4 Header section over 64 KB' });
    // The session goes on.
    const fine = await transaction(smtp, from, ['ada@example.com'], mime(from, id));
    expect(fine.code).toBe(250);
    smtp.close();
    expect(await emailsWithMessageId(id)).toHaveLength(1);
  });

  it('answers garbage with 5xx, closes on too much of it, stores nothing and keeps serving', async () => {
    const before = await queryRows<{ n: number }>(pigeon.deps.db.pool, sql`SELECT count(*)::int AS n FROM emails`);
    const smtp = await openDialogue(port, { localAddress: nextAddress() });
    const answers = [];
    for (const line of [
      'HELLO?',
      '\u0001\u0002\u0003',
      'GET / HTTP/1.1',
      'MAIL FROM:<nope',
      'RCPT TO:<x@y.z>',
      'DATA',
    ]) {
      answers.push((await smtp.say(line)).code);
    }
    expect(answers.every((code) => code >= 500 || code === 0 || code === 421)).toBe(true);
    for (let i = 0; i < 20 && !smtp.closed(); i++) await smtp.say(`JUNK ${i}`);
    expect(smtp.closed()).toBe(true);
    const after = await queryRows<{ n: number }>(pigeon.deps.db.pool, sql`SELECT count(*)::int AS n FROM emails`);
    expect(after[0]?.n).toBe(before[0]?.n);
    const next = await openDialogue(port, { localAddress: nextAddress() });
    expect(next.greeting.code).toBe(220);
    next.close();
  });

  it("counts each transaction against the project's rate limit: 451 4.7.1 past it", async () => {
    const { project, from } = await verifiedSender(pigeon, dns);
    const smtp = await loggedIn(project.secretKey);
    let limited: { code: number; text: string } | undefined;
    for (let i = 0; i < RATE_LIMIT * 3 && !limited; i++) {
      const answer = await smtp.say(`MAIL FROM:<${from}>`);
      if (answer.code !== 250) limited = answer;
      else await smtp.say('RSET');
    }
    expect(limited?.code).toBe(451);
    expect(limited?.text).toMatch(
      new RegExp(`^4\\.7\\.1 More than ${RATE_LIMIT} requests in a minute for this project; try again in \\d+ s$`),
    );
    smtp.close();
  });

  it('skips a suppressed recipient and names it in the 250', async () => {
    const { project, from } = await verifiedSender(pigeon, dns);
    // As a hard bounce records it (deliverability/feedback.ts).
    await insertSuppression(pigeon.deps.db.pool, project.id, 'gone@example.com');
    const smtp = await loggedIn(project.secretKey);
    const id = messageId();
    const answer = await transaction(smtp, from, ['ada@example.com', 'gone@example.com'], mime(from, id));
    expect(answer.text).toMatch(/^2\.0\.0 Ok: queued as [0-9a-f-]{36}; not sent to gone@example\.com \(suppressed\)$/);
    smtp.close();
    expect((await emailsWithMessageId(id)).map((r) => r.to_email)).toEqual(['ada@example.com']);
  });
});

describe('SMTP_SUBMISSION_ALLOW_PLAIN_AUTH', () => {
  let local: TestPigeon;
  beforeAll(async () => {
    // The local outbox: a domain is verified as soon as it is added.
    local = await startTestPigeon({ env: { SMTP_SUBMISSION_PORT: '0', SMTP_SUBMISSION_ALLOW_PLAIN_AUTH: 'true' } });
  });
  afterAll(() => local?.stop());

  it('takes AUTH without TLS from a loopback address (a relay on the same machine), and mail goes through', async () => {
    const { project, auth } = await newProject(local);
    expect((await api(local, auth).domains.create({ body: { domain: 'plain.example' } })).status).toBe(201);
    const smtp = await openDialogue(local.submissionPorts?.port ?? 0, { localAddress: '127.0.0.2' });
    expect((await smtp.say('EHLO relay.local')).text).toContain('AUTH PLAIN LOGIN');
    expect((await smtp.say(authPlain(project.secretKey))).code).toBe(235);
    const id = messageId();
    const answer = await transaction(smtp, 'app@plain.example', ['ada@example.com'], mime('app@plain.example', id));
    expect(answer.code).toBe(250);
    smtp.close();
    const [row] = await queryRows<{ status: string }>(
      local.deps.db.pool,
      sql`SELECT status FROM emails WHERE message_id = ${id}`,
    );
    expect(row).toBeDefined();
  });

  it('counts loopback as 127.0.0.0/8 and ::1 (IPv4-mapped too), nothing else', () => {
    expect(['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1'].map(isLoopback)).toEqual([true, true, true, true]);
    expect(['10.0.0.1', '::ffff:10.0.0.1', '::2', '128.0.0.1', 'fe80::1'].map(isLoopback)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
