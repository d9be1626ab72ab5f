import { execFileSync } from 'node:child_process';
import { createSign, randomUUID } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authenticate } from 'mailauth';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventNames, uniqueEmail } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { startDnsServer, type TestDnsServer } from '../../../test/dns-server.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { verifiedSender } from '../../../test/sending.js';
import { loadConfig } from '../../config/index.js';
import { queryRows, sql } from '../../db/query.js';

/**
 * Amazon SES and SNS are unreachable from here: msw answers for email.eu-west-1.amazonaws.com
 * (SES v2 SendEmail) and sns.eu-west-1.amazonaws.com (the signing certificate, subscription
 * confirmations). The certificate is made by this test with openssl, and SNS messages are signed
 * with its key the way SNS signs them.
 */
const REGION = 'eu-west-1';
const SES_URL = `https://email.${REGION}.amazonaws.com/v2/email/outbound-emails`;
const CERT_URL = `https://sns.${REGION}.amazonaws.com/SimpleNotificationService-pigeon-test.pem`;
const TOPIC = `arn:aws:sns:${REGION}:123456789012:pigeon-feedback`;

const certDir = mkdtempSync(join(tmpdir(), 'pigeon-sns-cert-'));
execFileSync('openssl', [
  'req',
  '-x509',
  '-newkey',
  'rsa:2048',
  '-nodes',
  '-keyout',
  join(certDir, 'key.pem'),
  '-out',
  join(certDir, 'cert.pem'),
  '-days',
  '2',
  '-subj',
  `/CN=sns.${REGION}.amazonaws.com`,
]);
const signingKey = readFileSync(join(certDir, 'key.pem'), 'utf8');
const certificate = readFileSync(join(certDir, 'cert.pem'), 'utf8');

interface SesRequest {
  authorization: string;
  body: {
    FromEmailAddress: string;
    Destination: { ToAddresses: string[] };
    Content: { Raw: { Data: string } };
    ConfigurationSetName?: string;
  };
}
const sesRequests: SesRequest[] = [];
let sesAnswer: () => Response = () => HttpResponse.json({ MessageId: `0102-${randomUUID()}-000000` });
const certFetches: string[] = [];
const confirmations: string[] = [];
const elsewhere: string[] = [];

const aws = setupServer(
  http.post(SES_URL, async ({ request }) => {
    sesRequests.push({
      authorization: request.headers.get('authorization') ?? '',
      body: (await request.json()) as never,
    });
    return sesAnswer();
  }),
  http.get(CERT_URL, ({ request }) => {
    certFetches.push(request.url);
    return HttpResponse.text(certificate);
  }),
  http.get(`https://sns.${REGION}.amazonaws.com/`, ({ request }) => {
    confirmations.push(request.url);
    return HttpResponse.xml('<ConfirmSubscriptionResponse/>');
  }),
  http.get('https://evil.example/*', ({ request }) => {
    elsewhere.push(request.url);
    return HttpResponse.text(certificate);
  }),
);

let pigeon: TestPigeon;
let dns: TestDnsServer;
beforeAll(async () => {
  aws.listen({ onUnhandledRequest: 'bypass' });
  dns = await startDnsServer();
  pigeon = await startTestPigeon({
    env: {
      SES_REGION: REGION,
      SES_CONFIGURATION_SET: 'pigeon-events',
      AWS_ACCESS_KEY_ID: 'AKIAPIGEONTEST000001',
      AWS_SECRET_ACCESS_KEY: 'pigeon-test-secret',
      DNS_SERVERS: dns.address,
      DELIVERY_RETRY_BASE_MS: '50',
      DELIVERY_PROBE_BASE_MS: '50',
    },
  });
});
afterAll(async () => {
  await pigeon?.stop();
  await dns?.close();
  aws.close();
  rmSync(certDir, { recursive: true, force: true });
});
beforeEach(() => {
  sesAnswer = () => HttpResponse.json({ MessageId: `0102-${randomUUID()}-000000` });
});

async function emailRow(id: string, until: string[], timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT status, provider_message_id, contact_id, last_error, attempts FROM emails WHERE id = ${id}`,
    );
    if (until.includes(rows[0]?.status) || Date.now() > deadline) return rows[0];
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Sends one email through Pigeon (and so through SES) and waits until it is SENT. */
async function sentThroughSes() {
  const s = await verifiedSender(pigeon, dns);
  const to = uniqueEmail('ses');
  const res = await api(pigeon, s.auth).emails.send({
    body: { to, from: s.from, subject: 'Through SES', body: '<p>Hello</p>', headers: { 'X-Campaign': 'spring' } },
  });
  const [sent] = bodyOf(res, 200).data.emails;
  if (!sent) throw new Error('no email in the answer');
  const { email: emailId, contact } = sent;
  const row = await emailRow(emailId, ['SENT', 'BOUNCED', 'FAILED']);
  return { s, to, emailId, contactId: contact.id as string, row };
}

describe('Amazon SES transport', () => {
  it('chooses SES with SES_REGION; SMTP_URL as well is a configuration error', () => {
    const base = { PIGEON_DATA_DIR: pigeon.dataDir, SES_REGION: REGION };
    expect(loadConfig(base).mail.ses).toEqual({ region: REGION, configurationSet: undefined, credentials: undefined });
    expect(() => loadConfig({ ...base, SMTP_URL: 'smtp://localhost:25' })).toThrow(/choose one mail transport/);
    expect(() => loadConfig({ ...base, SES_REGION: 'mars' })).toThrow(/AWS region/);
    expect(() => loadConfig({ ...base, AWS_ACCESS_KEY_ID: 'AKIAPIGEONTEST000001' })).toThrow(/AWS_SECRET_ACCESS_KEY/);
  });

  it('GET /config says the transport is ses', async () => {
    expect(bodyOf(await api(pigeon).system.config(), 200).mailTransport).toBe('ses');
  });

  it("sends raw MIME with Pigeon's headers and DKIM signature through SES v2, and stores SES's MessageId", async () => {
    const { s, to, row } = await sentThroughSes();
    expect(row?.status).toBe('SENT');
    const request = sesRequests.find((r) => r.body.Destination.ToAddresses.includes(to));
    expect(request).toBeDefined();
    expect(request?.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAPIGEONTEST000001\/\d{8}\/eu-west-1\/ses\//,
    );
    expect(request?.body.ConfigurationSetName).toBe('pigeon-events');
    expect(request?.body.FromEmailAddress).toContain(s.from);
    const raw = Buffer.from(request?.body.Content.Raw.Data ?? '', 'base64').toString('utf8');
    expect(raw).toMatch(/^Subject: Through SES$/m);
    expect(raw).toMatch(/^X-Campaign: spring$/m);
    expect(row?.provider_message_id).toMatch(/^0102-[0-9a-f-]{36}-000000$/);
    // The message SES received carries Pigeon's own DKIM signature, valid for the sender domain.
    const resolver = new Resolver();
    resolver.setServers([dns.address]);
    const result = await authenticate(raw, {
      ip: '127.0.0.1',
      helo: 'localhost',
      sender: s.from,
      resolver: (name: string, rr: string) => resolver.resolve(name, rr as 'TXT'),
    });
    expect(result.dkim.results[0]?.status.result).toBe('pass');
    expect(result.dkim.results[0]?.signingDomain).toBe(s.domain);
  });

  it('a message SES rejects is a bounce; throttling pauses the transport and costs no attempt', async () => {
    sesAnswer = () =>
      HttpResponse.json(
        { message: 'Email address is not verified.' },
        { status: 400, headers: { 'x-amzn-ErrorType': 'MessageRejected' } },
      );
    const rejected = await sentThroughSes();
    expect(rejected.row?.status).toBe('BOUNCED');
    expect(rejected.row?.last_error).toContain('not verified');
    expect(await eventNames(pigeon, rejected.contactId)).toContain('email.bounce');

    // Throttled twice: the transport's failure, not the message's: the breaker probes again and the
    // third call goes through, with no attempt charged to the message.
    let calls = 0;
    sesAnswer = () =>
      ++calls <= 2
        ? HttpResponse.json(
            { message: 'Maximum sending rate exceeded.' },
            { status: 429, headers: { 'x-amzn-ErrorType': 'TooManyRequestsException' } },
          )
        : HttpResponse.json({ MessageId: `0102-${randomUUID()}-000000` });
    const retried = await sentThroughSes();
    expect(retried.row?.status).toBe('SENT');
    expect(retried.row?.attempts).toBe(1);
    expect(calls).toBe(3);
  });
});

/** The fields SNS signs, in its order, for each message type. */
function stringToSign(m: Record<string, string>): string {
  const keys =
    m.Type === 'Notification'
      ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return keys
    .filter((k) => m[k] !== undefined)
    .map((k) => `${k}\n${m[k]}\n`)
    .join('');
}

function signed(fields: Record<string, string>, { certUrl = CERT_URL, key = signingKey } = {}) {
  const message: Record<string, string> = {
    MessageId: randomUUID(),
    TopicArn: TOPIC,
    Timestamp: new Date().toISOString(),
    SignatureVersion: '2',
    SigningCertURL: certUrl,
    ...fields,
  };
  message.Signature = createSign('RSA-SHA256').update(stringToSign(message)).sign(key, 'base64');
  return message;
}

const notification = (message: Record<string, unknown>, extra: Record<string, string> = {}) =>
  signed({ Type: 'Notification', Message: JSON.stringify(message), ...extra });

const post = (body: Record<string, string>) =>
  // untyped: raw body (SNS posts its JSON as text/plain)
  pigeon.request('POST', '/webhooks/sns', {
    rawBody: JSON.stringify(body),
    headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': body.Type ?? '' },
  });

const sesMail = (messageId: string, to: string) => ({
  timestamp: new Date().toISOString(),
  messageId,
  source: 'hello@example.com',
  destination: [to],
});

describe('POST /webhooks/sns', () => {
  it('confirms a subscription by visiting its SubscribeURL on the SNS host; the certificate is fetched once', async () => {
    const subscribeUrl = `https://sns.${REGION}.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=tok-1`;
    const res = await post(
      signed({
        Type: 'SubscriptionConfirmation',
        Message: 'You have chosen to subscribe to the topic.',
        SubscribeURL: subscribeUrl,
        Token: 'tok-1',
      }),
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ received: true, type: 'SubscriptionConfirmation' });
    expect(confirmations).toContain(subscribeUrl);
    const again = await post(
      signed({
        Type: 'SubscriptionConfirmation',
        Message: 'again',
        SubscribeURL: subscribeUrl.replace('tok-1', 'tok-2'),
        Token: 'tok-2',
      }),
    );
    expect(again.status).toBe(200);
    expect(certFetches).toEqual([CERT_URL]);
  });

  it('refuses bad signatures, certificates and links off the SNS host, and stale messages', async () => {
    const confirmationsBefore = confirmations.length;
    const good = notification({ notificationType: 'Delivery', mail: sesMail('x', 'a@b.example') });
    const tampered = await post({ ...good, Message: good.Message?.replace('Delivery', 'Bounce') ?? '' });
    expect(expectEnvelope(tampered, 400, 'INVALID_SIGNATURE').message).toMatch(/signature/i);
    expectEnvelope(
      await post({ ...good, Signature: `${good.Signature?.slice(0, -8)}AAAAAAA=` }),
      400,
      'INVALID_SIGNATURE',
    );
    const offHost = notification(
      { notificationType: 'Delivery', mail: sesMail('x', 'a@b.example') },
      { SigningCertURL: 'https://evil.example/cert.pem' },
    );
    expect(expectEnvelope(await post(offHost), 400, 'INVALID_SIGNATURE').message).toMatch(/certificate|url/i);
    const lookalike = signed(
      { Type: 'Notification', Message: '{}' },
      { certUrl: `https://sns.${REGION}.amazonaws.com.evil.example/cert.pem` },
    );
    expectEnvelope(await post(lookalike), 400, 'INVALID_SIGNATURE');
    const otherPath = signed(
      { Type: 'Notification', Message: '{}' },
      { certUrl: `https://sns.${REGION}.amazonaws.com/anything/else.pem` },
    );
    expectEnvelope(await post(otherPath), 400, 'INVALID_SIGNATURE');
    const plainHttp = signed({ Type: 'Notification', Message: '{}' }, { certUrl: CERT_URL.replace('https:', 'http:') });
    expectEnvelope(await post(plainHttp), 400, 'INVALID_SIGNATURE');
    expect(elsewhere).toEqual([]);
    expect(certFetches.every((url) => url === CERT_URL)).toBe(true);
    const stale = signed({
      Type: 'Notification',
      Message: '{}',
      Timestamp: new Date(Date.now() - 2 * 3600_000).toISOString(),
    });
    expect(expectEnvelope(await post(stale), 400, 'INVALID_SIGNATURE').message).toContain('stale');
    const phishing = signed({
      Type: 'SubscriptionConfirmation',
      Message: 'subscribe',
      SubscribeURL: 'https://evil.example/confirm',
      Token: 't',
    });
    expectEnvelope(await post(phishing), 400, 'INVALID_SIGNATURE');
    expect(elsewhere).toEqual([]);
    expect(confirmations.length).toBe(confirmationsBefore);
    // untyped: raw body (malformed JSON)
    const notJson = await pigeon.request('POST', '/webhooks/sns', {
      rawBody: '{"Type": "Notif',
      headers: { 'content-type': 'text/plain' },
    });
    expect(notJson.status).toBe(400);
  });

  it('records bounces, complaints and deliveries on the email SES sent, once per SNS message', async () => {
    const hard = await sentThroughSes();
    const bounce = notification({
      notificationType: 'Bounce',
      bounce: {
        bounceType: 'Permanent',
        bounceSubType: 'General',
        bouncedRecipients: [{ emailAddress: hard.to, diagnosticCode: 'smtp; 550 5.1.1 user unknown' }],
      },
      mail: sesMail(hard.row?.provider_message_id, hard.to),
    });
    const res = await post(bounce);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ received: true, type: 'ses.bounce' });
    expect(await emailRow(hard.emailId, ['BOUNCED'])).toMatchObject({
      status: 'BOUNCED',
      last_error: 'smtp; 550 5.1.1 user unknown',
    });
    const bounceEvents = async () =>
      (
        await queryRows(
          pigeon.deps.db.pool,
          sql`SELECT data FROM events WHERE contact_id = ${hard.contactId} AND name = 'email.bounce'`,
        )
      ).map((r) => r.data);
    expect(await bounceEvents()).toEqual([
      expect.objectContaining({ emailId: hard.emailId, bounceType: 'hard', source: 'sns' }),
    ]);
    // The same path as a DSN received over SMTP: the address is suppressed, the contact unsubscribed.
    const suppressed = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT reason, email_id FROM suppressions WHERE email = ${hard.to}`,
    );
    expect(suppressed).toEqual([{ reason: 'hard_bounce', email_id: hard.emailId }]);
    const [contact] = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT subscribed FROM contacts WHERE id = ${hard.contactId}`,
    );
    expect(contact?.subscribed).toBe(false);
    // The same SNS message again (a redelivery or a replay): acknowledged, not recorded twice.
    expect((await post(bounce)).body).toEqual({ received: true, type: 'Duplicate' });
    expect(await bounceEvents()).toHaveLength(1);

    const soft = await sentThroughSes();
    await post(
      notification({
        eventType: 'Bounce',
        bounce: {
          bounceType: 'Transient',
          bounceSubType: 'MailboxFull',
          bouncedRecipients: [{ emailAddress: soft.to }],
        },
        mail: sesMail(soft.row?.provider_message_id, soft.to),
      }),
    );
    expect((await emailRow(soft.emailId, ['SENT']))?.status).toBe('SENT');
    expect(await eventNames(pigeon, soft.contactId)).toContain('email.bounce');

    const complained = await sentThroughSes();
    await post(
      notification({
        notificationType: 'Complaint',
        complaint: { complainedRecipients: [{ emailAddress: complained.to }], complaintFeedbackType: 'abuse' },
        mail: sesMail(complained.row?.provider_message_id, complained.to),
      }),
    );
    expect((await emailRow(complained.emailId, ['COMPLAINED']))?.status).toBe('COMPLAINED');
    expect(await eventNames(pigeon, complained.contactId)).toContain('email.complaint');
    const complaint = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT reason FROM suppressions WHERE email = ${complained.to}`,
    );
    expect(complaint).toEqual([{ reason: 'complaint' }]);

    const delivered = await sentThroughSes();
    await post(
      notification({
        notificationType: 'Delivery',
        delivery: { recipients: [delivered.to], smtpResponse: '250 ok' },
        mail: sesMail(delivered.row?.provider_message_id, delivered.to),
      }),
    );
    // As for SMTP: the status stays SENT and `delivered_at` carries the fact.
    const [deliveredRow] = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT status, delivered_at FROM emails WHERE id = ${delivered.emailId}`,
    );
    expect(deliveredRow).toMatchObject({ status: 'SENT', delivered_at: expect.any(Date) });
    expect(await eventNames(pigeon, delivered.contactId)).toContain('email.delivery');

    // A notification about mail Pigeon never sent, or of a kind it does not record: acknowledged.
    const unknown = await post(notification({ notificationType: 'Delivery', mail: sesMail('nope', 'x@y.example') }));
    expect(unknown.body).toEqual({ received: true, type: 'ses.delivery' });
    const open = await post(
      notification({ eventType: 'Open', mail: sesMail(delivered.row?.provider_message_id, 'x') }),
    );
    expect(open.body).toEqual({ received: true, type: 'Ignored' });
  });
});
