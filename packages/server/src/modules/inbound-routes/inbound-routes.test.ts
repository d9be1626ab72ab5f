import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { contract } from '@pigeon/contract';
import type { ClientInferRequest } from '@ts-rest/core';
import { simpleParser } from 'mailparser';
import { afterAll, describe, expect, it } from 'vitest';
import { Pigeon, verifyWebhook } from '../../../../sdk/dist/index.js';
import { api, bodyOf } from '../../../test/api.js';
import { campaignToAll } from '../../../test/campaigns.js';
import { expectEnvelope } from '../../../test/helpers.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { until } from '../../../test/until.js';
import { startTarget, type Target } from '../../../test/webhook-targets.js';
import { buildWorkflow, executionsOf } from '../../../test/workflows.js';
import { queryRows, sql } from '../../db/query.js';
import { applyRetention } from '../retention/service.js';

// swaks, from Debian (scripts/test-deps.sh installs it), plays the outside world's mail server.
const hasSwaks = spawnSync('swaks', ['--version']).status === 0;
if (!hasSwaks) console.warn('Inbound routes with swaks skipped: swaks is not here (Debian: swaks).');

const MAX_BYTES = 256 * 1024;
const { pigeon, sink, dns } = await startMailingPigeon({
  INBOUND_SMTP_PORT: '0',
  INBOUND_SMTP_HOST: '127.0.0.1',
  INBOUND_SMTP_MAX_BYTES: String(MAX_BYTES),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_POLL_MS: '50',
  CHANGE_FEED_POLL_MS: '50',
  CAMPAIGN_DISPATCH_INTERVAL_MS: '100',
});
const work = mkdtempSync(join(tmpdir(), 'pigeon-inbound-'));
const targets: Target[] = [];
afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  await Promise.all(targets.map((t) => t.close()));
});

type Sender = Awaited<ReturnType<typeof verifiedSender>>;
let counter = 0;

/** A replier's domain whose SPF allows 127.0.0.1 and whose DMARC asks for alignment (published on the test DNS). */
function replierDomain(): string {
  const domain = `people${++counter}-${process.pid}.example`;
  dns.setTxt(domain, 'v=spf1 ip4:127.0.0.1 -all');
  dns.setTxt(`_dmarc.${domain}`, 'v=DMARC1; p=reject');
  return domain;
}

/** swaks to the inbound port; answers its exit code and its account of the dialogue. */
async function swaks(args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await promisify(execFile)(
      'swaks',
      ['--server', '127.0.0.1', '--port', String(pigeon.inboundSmtpPort), '--helo', 'mx.people.example', ...args],
      { timeout: 30_000 },
    );
    return { code: 0, output: stdout };
  } catch (err) {
    const { code, stdout, stderr } = err as { code?: number; stdout?: string; stderr?: string };
    return { code: code ?? -1, output: `${stdout ?? ''}${stderr ?? ''}` };
  }
}

async function route(s: Sender, body: ClientInferRequest<typeof contract.inboundRoutes.create>['body']) {
  return bodyOf(await api(pigeon, s.auth).inboundRoutes.create({ body }), 201);
}

async function endpoint(s: Sender): Promise<{ target: Target; secret: string }> {
  const target = await startTarget();
  targets.push(target);
  const res = await api(pigeon, s.auth).webhookEndpoints.create({
    body: { url: `${target.origin}/hooks`, eventTypes: ['email.received'] },
  });
  return { target, secret: bodyOf(res, 201).secret };
}

const inbound = async (s: Sender) => bodyOf(await api(pigeon, s.auth).inboundRoutes.listEmails(), 200).data;

describe('inbound routes API', () => {
  it('creates, lists, changes and deletes routes on verified domains; refuses what it cannot take', async () => {
    const s = await verifiedSender(pigeon, dns);
    const created = await route(s, { domain: `In.${s.domain}`, pattern: 'Support', action: 'RECORD' });
    expect(created).toMatchObject({ domain: `in.${s.domain}`, pattern: 'support', enabled: true });

    const routes = api(pigeon, s.auth).inboundRoutes;
    const unverified = await routes.create({
      body: { domain: 'elsewhere.example', pattern: '*', action: 'WEBHOOK' },
    });
    expect(expectEnvelope(unverified, 422, 'VALIDATION_ERROR').errors?.[0]).toMatchObject({
      field: 'domain',
      code: 'unverified_domain',
    });
    // untyped: wrong on purpose (an action not in the enum)
    const badPattern = await pigeon.request('POST', '/inbound-routes', {
      headers: s.auth,
      body: { domain: s.domain, pattern: 'sup*port', action: 'SHOUT' },
    });
    const fields = expectEnvelope(badPattern, 422, 'VALIDATION_ERROR').errors?.map((e) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['pattern', 'action']));
    const twice = await routes.create({
      body: { domain: `in.${s.domain}`, pattern: 'support', action: 'WEBHOOK' },
    });
    expectEnvelope(twice, 409, 'CONFLICT');

    const params = { id: created.id };
    const changed = await routes.update({ params, body: { action: 'WEBHOOK', enabled: false } });
    expect(changed.body).toMatchObject({ action: 'WEBHOOK', enabled: false, pattern: 'support' });
    const list = await routes.list();
    expect(bodyOf(list, 200).data.map((r) => r.id)).toEqual([created.id]);

    // Another project's route is not there for this one.
    const other = await verifiedSender(pigeon, dns);
    const theirs = api(pigeon, other.auth).inboundRoutes;
    expectEnvelope(await theirs.get({ params }), 404, 'NOT_FOUND');
    expectEnvelope(await theirs.update({ params, body: { enabled: true } }), 404, 'NOT_FOUND');
    expectEnvelope(await theirs.delete({ params }), 404, 'NOT_FOUND');
    const elsewhere = await routes.update({ params, body: { domain: other.domain } });
    expect(expectEnvelope(elsewhere, 422, 'VALIDATION_ERROR').errors?.[0]).toMatchObject({ field: 'domain' });
    expect((await routes.get({ params })).body).toMatchObject({ enabled: false, domain: `in.${s.domain}` });
    expect((await routes.delete({ params })).status).toBe(204);
    expect(bodyOf(await routes.list(), 200).data).toEqual([]);
  });
});

describe.skipIf(!hasSwaks)('the inbound receiver with routes (swaks)', () => {
  it('refuses unknown recipients and disabled routes at RCPT (550 5.1.1), takes RECORD mail without an event', async () => {
    const s = await verifiedSender(pigeon, dns);
    const from = `ada@${replierDomain()}`;
    const unknown = await swaks(['--from', from, '--to', `nobody@${s.domain}`]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.output).toContain('550 5.1.1');

    const archive = await route(s, { domain: s.domain, pattern: 'archive', action: 'RECORD' });
    const disabled = await route(s, { domain: s.domain, pattern: 'closed', action: 'RECORD', enabled: false });
    const refused = await swaks(['--from', from, '--to', `closed@${s.domain}`]);
    expect(refused.output).toContain('550 5.1.1');
    expect(await inbound(s)).toEqual([]);

    // Sent twice under one Message-ID (a sender that lost the 250 retries): taken twice, kept once.
    const once = ['--header', 'Subject: Keep this', '--header', `Message-Id: <keep-${process.pid}@people.example>`];
    for (let i = 0; i < 2; i++) {
      const taken = await swaks(['--from', from, '--to', `Archive@${s.domain}`, ...once]);
      expect(taken.code, taken.output).toBe(0);
    }
    expect(await inbound(s)).toHaveLength(1);
    const [kept] = await inbound(s);
    if (!kept) throw new Error('the message was not recorded');
    expect(kept).toMatchObject({
      routeId: archive.id,
      contactId: null,
      subject: 'Keep this',
      from: { email: from },
      to: [`archive@${s.domain}`],
      auth: { spf: 'pass', dmarc: 'pass' },
      inReplyTo: null,
    });
    const events = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT 1 FROM events WHERE project_id = ${s.project.id} AND name = 'email.received'`,
    );
    expect(events).toHaveLength(0);
    expect(disabled.id).toBeTruthy();
    // The SDK reads the same.
    const sdk = new Pigeon({ apiKey: s.project.secretKey, baseUrl: pigeon.url, maxRetries: 0 });
    expect((await sdk.inboundRoutes.list()).map((r) => r.pattern).sort()).toEqual(['archive', 'closed']);
    expect((await sdk.inboundRoutes.emails({ routeId: archive.id })).map((e) => e.id)).toEqual([kept.id]);
    expect(await sdk.inboundRoutes.email(kept.id)).toMatchObject({ subject: 'Keep this', auth: kept.auth });
    // Another project reads none of it.
    const other = await verifiedSender(pigeon, dns);
    expectEnvelope(await api(pigeon, other.auth).inboundRoutes.getEmail({ params: { id: kept.id } }), 404, 'NOT_FOUND');
    expect(await inbound(other)).toEqual([]);
  });

  it('refuses oversize mail (552) and a message without From (550 5.6.0), storing nothing', async () => {
    const s = await verifiedSender(pigeon, dns);
    await route(s, { domain: s.domain, pattern: '*', action: 'WEBHOOK' });
    const from = `ada@${replierDomain()}`;
    const bigBody = join(work, 'big.txt');
    writeFileSync(bigBody, 'x'.repeat(MAX_BYTES + 10));
    const big = await swaks(['--from', from, '--to', `any@${s.domain}`, '--body', `@${bigBody}`]);
    expect(big.output).toMatch(/55[24] /);
    const file = join(work, 'garbage.eml');
    writeFileSync(file, '\u0000\u0001 not a message at all\r\n');
    const garbage = await swaks(['--from', from, '--to', `any@${s.domain}`, '--data', `@${file}`]);
    expect(garbage.output).toContain('550 5.6.0');
    expect(await inbound(s)).toEqual([]);
  });

  it('a reply to a campaign message reaches the endpoint signed, linked to its email and contact, with its attachment', async () => {
    const s = await verifiedSender(pigeon, dns);
    const people = replierDomain();
    const ada = `ada@${people}`;
    const { campaign, send } = await campaignToAll(pigeon, s, [ada], {
      campaign: { subject: 'Our news', body: `<p>Hello! Answer to reply+{{replyToken}}@in.${s.domain}</p>` },
    });
    await route(s, { domain: `in.${s.domain}`, pattern: 'support', action: 'WEBHOOK' });
    await route(s, { domain: `in.${s.domain}`, pattern: 'reply+*', action: 'WEBHOOK' });
    const { target, secret } = await endpoint(s);
    await send();
    const sent = await until(
      async () => sink.messages.find((m) => m.to.includes(ada)),
      (m) => m !== undefined,
    );
    if (!sent?.messageId) throw new Error('the campaign message did not arrive');
    const email = await until(
      async () =>
        bodyOf(await api(pigeon, s.auth).sentEmails.list({ query: { campaignId: campaign.id } }), 200).data[0],
      (e) => e !== undefined,
    );
    if (!email) throw new Error('the campaign email is not listed');

    const attachment = join(work, 'notes.txt');
    writeFileSync(attachment, 'my notes\n');
    const reply = await swaks([
      ...['--from', ada, '--to', `support@in.${s.domain}`],
      ...['--header', `From: Ada Lovelace <${ada}>`, '--header', 'Subject: Re: Our news'],
      ...['--header', `In-Reply-To: ${sent.messageId}`, '--header', `References: ${sent.messageId}`],
      ...['--body', 'Thanks, a question.', '--attach-type', 'text/plain', '--attach', `@${attachment}`],
    ]);
    expect(reply.code, reply.output).toBe(0);

    const arrived = await until(
      async () => target.received[0],
      (r) => r !== undefined,
    );
    if (!arrived) throw new Error('no webhook arrived');
    const event = await verifyWebhook(arrived.body, arrived.headers, secret);
    if (event.type !== 'email.received') throw new Error(`unexpected ${event.type}`);
    expect(event.data).toMatchObject({
      from: { email: ada, name: 'Ada Lovelace' },
      to: [`support@in.${s.domain}`],
      subject: 'Re: Our news',
      auth: { spf: 'pass', dmarc: 'pass' },
      contact: { id: email.contactId, email: ada },
      inReplyTo: { emailId: email.id, contactId: email.contactId, by: 'header' },
    });
    expect(event.data.text).toContain('Thanks, a question.');
    expect(event.data.headers).toContainEqual({ name: 'In-Reply-To', value: sent.messageId });
    const [file] = event.data.attachments;
    expect(file).toMatchObject({ filename: 'notes.txt', contentType: 'text/plain' });
    const download = await fetch(file?.url ?? '');
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('my notes\n');
    const forged = await fetch(`${file?.url.slice(0, -3)}AAA`);
    expect(forged.status).toBe(404);

    // The signed reply address in the campaign's body links without any header.
    const token = /reply\+([0-9a-f]{52})@/.exec((await simpleParser(sent.raw)).text ?? '')?.[1];
    expect(token).toBeDefined();
    const byAddress = await swaks(['--from', ada, '--to', `reply+${token}@in.${s.domain}`]);
    expect(byAddress.code, byAddress.output).toBe(0);
    const second = await until(
      async () => target.received[1],
      (r) => r !== undefined,
    );
    const linked = await verifyWebhook(second?.body ?? '', second?.headers ?? {}, secret);
    expect(linked.data).toMatchObject({ inReplyTo: { emailId: email.id, by: 'address' } });
    // A token changed by one digit is no one's: no link (the catch-all-free route still takes the mail).
    const tampered = `${token?.slice(0, -1)}${token?.endsWith('0') ? '1' : '0'}`;
    expect((await swaks(['--from', ada, '--to', `reply+${tampered}@in.${s.domain}`])).code).toBe(0);
    const third = await until(
      async () => target.received[2],
      (r) => r !== undefined,
    );
    expect((await verifyWebhook(third?.body ?? '', third?.headers ?? {}, secret)).data).toMatchObject({
      inReplyTo: null,
    });
  });

  it('a WORKFLOW route starts the workflows triggered by email.received, a WEBHOOK route reaches the endpoints: each only its own', async () => {
    const s = await verifiedSender(pigeon, dns);
    await route(s, { domain: s.domain, pattern: 'orders', action: 'WORKFLOW' });
    await route(s, { domain: s.domain, pattern: 'hello', action: 'WEBHOOK' });
    const { target } = await endpoint(s);
    const wf = await buildWorkflow(pigeon, s.auth, {
      trigger: 'email.received',
      steps: [{ key: 'tag', type: 'UPDATE_CONTACT', config: { updates: { wroteIn: '{{event.subject}}' } } }],
      transitions: [],
      allowReentry: true,
    });
    const grace = `grace@${replierDomain()}`;
    // One sender, so the change feed hands the three events to each consumer in this order.
    for (const [to, subject] of [
      ['hello', 'Hello'],
      ['orders', 'Order 42'],
      ['hello', 'Hello again'],
    ]) {
      const sent = await swaks(['--from', grace, '--to', `${to}@${s.domain}`, '--header', `Subject: ${subject}`]);
      expect(sent.code, sent.output).toBe(0);
    }
    const executions = await until(
      () => executionsOf(pigeon, s.auth, wf.id),
      (list) => list.length > 0,
    );
    const contact = await until(
      async () => (await api(pigeon, s.auth).contacts.get({ params: { id: executions[0]?.contactId ?? '' } })).body,
      (c) => 'data' in c && c.data?.wroteIn === 'Order 42',
    );
    expect(contact).toMatchObject({ email: grace, subscribed: false, data: { wroteIn: 'Order 42' } });
    // The workflow consumer had the first message before the second: it started nothing for it.
    expect(await executionsOf(pigeon, s.auth, wf.id)).toHaveLength(1);

    // The endpoint's deliveries, once the third message's is written, are the two WEBHOOK ones.
    const endpoints = api(pigeon, s.auth).webhookEndpoints;
    const endpointId = bodyOf(await endpoints.list(), 200).data[0]?.id ?? '';
    const deliveries = async () =>
      bodyOf(await endpoints.deliveries({ params: { id: endpointId } }), 200).data as {
        payload: { data: { subject: string } };
      }[];
    const written = await until(deliveries, (list) => list.some((d) => d.payload.data.subject === 'Hello again'));
    expect(written.map((d) => d.payload.data.subject).sort()).toEqual(['Hello', 'Hello again']);
    expect(target.received.every((r) => !r.body.includes('Order 42'))).toBe(true);
  });

  // Last in the file: retention runs a month ahead for every project of this database.
  it("follows the content retention: text, HTML, headers and attachments go, the message's facts stay", async () => {
    const s = await verifiedSender(pigeon, dns);
    await route(s, { domain: s.domain, pattern: 'keep', action: 'RECORD' });
    const file = join(work, 'kept.txt');
    writeFileSync(file, 'kept for a while\n');
    const from = `ada@${replierDomain()}`;
    const sent = await swaks([
      '--from',
      from,
      '--to',
      `keep@${s.domain}`,
      '--body',
      'Body text',
      '--attach',
      `@${file}`,
    ]);
    expect(sent.code, sent.output).toBe(0);
    const [before] = await inbound(s);
    if (!before) throw new Error('the message was not recorded');
    expect(before.text).toContain('Body text');
    const url = before.attachments[0]?.url as string;
    expect((await fetch(url)).status).toBe(200);

    const run = await applyRetention(pigeon.deps.db.pool, { now: new Date(Date.now() + 31 * 86_400_000) });
    expect(run.contentCleared).toBeGreaterThan(0);
    const after = bodyOf(await api(pigeon, s.auth).inboundRoutes.getEmail({ params: { id: before.id } }), 200);
    expect(after).toMatchObject({ text: null, html: null, headers: [], attachments: [], from: { email: from } });
    expect(after.auth).toEqual(before.auth);
    expect((await fetch(url)).status).toBe(404);
  });
});
