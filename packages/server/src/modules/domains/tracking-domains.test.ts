import { request as httpRequest } from 'node:http';
import { assert, describe, expect, it } from 'vitest';
import { Pigeon } from '../../../../sdk/dist/index.js';
import { newProject, signUp } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { campaignToAll } from '../../../test/campaigns.js';
import { expectEnvelope } from '../../../test/helpers.js';
import { hrefs, mailOf, parseMessage, pixelUrl } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { until } from '../../../test/until.js';
import { queryRows, sql } from '../../db/query.js';
import { recheckPendingTrackingDomains } from './tracking-domains.js';

const { pigeon, sink, dns } = await startMailingPigeon();
const publicUrl = pigeon.deps.config.http.publicUrl;
const publicHost = new URL(publicUrl).hostname;

type Sender = Awaited<ReturnType<typeof verifiedSender>>;

/** Adds `links.<sender domain>` and returns it. */
async function addTrackingDomain(sender: Sender) {
  const res = await api(pigeon, sender.auth).trackingDomains.create({ body: { domain: `links.${sender.domain}` } });
  return bodyOf(res, 201);
}

const verify = async (sender: Sender, id: string) =>
  bodyOf(await api(pigeon, sender.auth).trackingDomains.verify({ params: { id } }), 200);

/** Sends one tracked message with a link and returns the links of the mail as it arrived. */
async function sendTracked(sender: Sender) {
  const res = await api(pigeon, sender.auth).emails.send({
    body: {
      from: sender.from,
      to: `reader-${Math.random().toString(36).slice(2)}@example.com`,
      subject: 'News',
      body: '<p><a href="https://shop.example/sale">Sale</a> <a href="https://shop.example/new">New</a></p>',
      tracking: true,
    },
  });
  const [sent] = bodyOf(res, 200).data.emails;
  assert(sent);
  const message = parseMessage((await mailOf(sink, sent.email)).raw);
  const [click, other] = hrefs(message).filter((h) => h.includes('/t/c/'));
  assert(click && other, 'the message has two click links');
  return { emailId: sent.email, click, other, pixel: pixelUrl(message) };
}

/** GET on Pigeon's listener with the Host header of `url` (as a browser following the link to a CNAME'd host). */
function followWithHost(url: string): Promise<{ status: number; location: string | undefined }> {
  const link = new URL(url);
  const listener = new URL(pigeon.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: listener.hostname,
        port: listener.port,
        path: link.pathname,
        headers: { host: link.host },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const clicksOf = async (emailId: string) => {
  const [row] = await queryRows<{ clicks: number }>(
    pigeon.deps.db.pool,
    sql`SELECT clicks FROM emails WHERE id = ${emailId}`,
  );
  return row?.clicks ?? 0;
};

describe('tracking domains', () => {
  it('verifies by a CNAME to the public host: missing and another target leave it pending', async () => {
    const sender = await verifiedSender(pigeon, dns);
    const added = await addTrackingDomain(sender);
    expect(added).toMatchObject({
      domain: `links.${sender.domain}`,
      senderDomain: { domain: sender.domain },
      status: 'pending',
      record: { type: 'CNAME', name: `links.${sender.domain}`, value: publicHost, status: 'unchecked' },
    });
    expect(added.url).toBe(publicUrl.replace(publicHost, `links.${sender.domain}`));

    const missing = await verify(sender, added.id);
    expect(missing).toMatchObject({ status: 'pending', record: { status: 'missing' } });
    expect(missing.note).toContain(`CNAME record from links.${sender.domain} to ${publicHost}`);

    dns.setCname(`links.${sender.domain}`, 'elsewhere.example.net');
    expect(await verify(sender, added.id)).toMatchObject({ status: 'pending', record: { status: 'mismatch' } });

    dns.setCname(`links.${sender.domain}`, publicHost);
    const verified = await verify(sender, added.id);
    expect(verified).toMatchObject({ status: 'verified', record: { status: 'verified' }, note: null });
    expect(verified.verifiedAt).not.toBeNull();

    const listed = bodyOf(await api(pigeon, sender.auth).trackingDomains.list(), 200).data;
    expect(listed.map((t) => t.id)).toEqual([added.id]);
    const got = bodyOf(await api(pigeon, sender.auth).trackingDomains.get({ params: { id: added.id } }), 200);
    expect(got.status).toBe('verified');
  });

  it('the periodic domain check verifies a pending tracking domain once its CNAME is there', async () => {
    const sender = await verifiedSender(pigeon, dns);
    const added = await addTrackingDomain(sender);
    dns.setCname(added.domain, publicHost);
    expect(await recheckPendingTrackingDomains(pigeon.deps)).toBeGreaterThanOrEqual(1);
    const got = bodyOf(await api(pigeon, sender.auth).trackingDomains.get({ params: { id: added.id } }), 200);
    expect(got).toMatchObject({ status: 'verified', record: { status: 'verified' } });
  });

  it('refuses a name outside the sender domains, a second one per sender domain, and answers 404 to another project', async () => {
    const sender = await verifiedSender(pigeon, dns);
    const outside = await api(pigeon, sender.auth).trackingDomains.create({ body: { domain: 'links.other.example' } });
    expect(expectEnvelope(outside, 422, 'VALIDATION_ERROR').errors).toEqual([
      expect.objectContaining({ field: 'domain', code: 'not_a_subdomain' }),
    ]);
    const added = await addTrackingDomain(sender);
    const second = await api(pigeon, sender.auth).trackingDomains.create({
      body: { domain: `click.${sender.domain}` },
    });
    expectEnvelope(second, 409, 'CONFLICT');

    const other = await newProject(pigeon);
    for (const res of [
      await api(pigeon, other.auth).trackingDomains.get({ params: { id: added.id } }),
      await api(pigeon, other.auth).trackingDomains.verify({ params: { id: added.id } }),
      await api(pigeon, other.auth).trackingDomains.delete({ params: { id: added.id } }),
    ]) {
      expectEnvelope(res, 404, 'NOT_FOUND');
    }
    expect(bodyOf(await api(pigeon, other.auth).trackingDomains.list(), 200).data).toEqual([]);
  });

  it('lets a MEMBER read tracking domains but not add or remove them (a session needs OWNER or ADMIN)', async () => {
    const sender = await verifiedSender(pigeon, dns);
    const added = await addTrackingDomain(sender);
    const member = await signUp(pigeon);
    const invited = await api(pigeon, { cookie: sender.owner.cookie }).projects.inviteMember({
      params: { id: sender.project.id },
      body: { email: member.user.email, role: 'MEMBER' },
    });
    expect(invited.status).toBe(201);
    const asMember = api(pigeon, { cookie: member.cookie, 'x-project-id': sender.project.id }).trackingDomains;
    expect(bodyOf(await asMember.list(), 200).data.map((t) => t.id)).toEqual([added.id]);
    expectEnvelope(await asMember.create({ body: { domain: `more.${sender.domain}` } }), 403, 'INSUFFICIENT_ROLE');
    expectEnvelope(await asMember.delete({ params: { id: added.id } }), 403, 'INSUFFICIENT_ROLE');
  });

  it('does not verify a name another project has verified, even with the CNAME in place', async () => {
    const sender = await verifiedSender(pigeon, dns);
    const mine = await addTrackingDomain(sender);
    dns.setCname(mine.domain, publicHost);
    expect((await verify(sender, mine.id)).status).toBe('verified');

    const other = await newProject(pigeon);
    const otherSender = { ...other, domain: sender.domain, from: sender.from };
    expect((await api(pigeon, other.auth).domains.create({ body: { domain: sender.domain } })).status).toBe(201);
    const theirs = await addTrackingDomain(otherSender);
    const checked = await verify(otherSender, theirs.id);
    expect(checked).toMatchObject({ status: 'pending', record: { status: 'verified' } });
    expect(checked.note).toBe('Another project has verified this tracking domain.');
  });

  it("puts the open pixel and click links of the sender domain's mail on its tracking domain; links keep working after it goes", async () => {
    const sender = await verifiedSender(pigeon, dns);
    const tracking = await addTrackingDomain(sender);
    dns.setCname(tracking.domain, publicHost);
    await verify(sender, tracking.id);

    const first = await sendTracked(sender);
    expect(new URL(first.click).hostname).toBe(tracking.domain);
    expect(first.click.startsWith(`${tracking.url}/t/c/`)).toBe(true);
    expect(first.pixel?.startsWith(`${tracking.url}/t/o/`)).toBe(true);

    // A browser following the link reaches Pigeon with the tracking domain as Host.
    expect(await followWithHost(first.click)).toEqual({ status: 302, location: 'https://shop.example/sale' });
    expect(
      await until(
        () => clicksOf(first.emailId),
        (n) => n === 1,
      ),
    ).toBe(1);

    // The CNAME moves away: a check takes the tracking domain out of use, new mail is on PUBLIC_URL.
    dns.setCname(tracking.domain, 'elsewhere.example.net');
    expect((await verify(sender, tracking.id)).status).toBe('pending');
    const second = await sendTracked(sender);
    expect(second.click.startsWith(`${publicUrl}/t/c/`)).toBe(true);

    // Deleted: a link already sent still redirects and counts (the other link: clicks of one link within a burst fold).
    const deleted = await api(pigeon, sender.auth).trackingDomains.delete({ params: { id: tracking.id } });
    expect(deleted.status).toBe(204);
    expect(new URL(first.other).hostname).toBe(tracking.domain);
    expect(await followWithHost(first.other)).toEqual({ status: 302, location: 'https://shop.example/new' });
    expect(
      await until(
        () => clicksOf(first.emailId),
        (n) => n === 2,
      ),
    ).toBe(2);
    const third = await sendTracked(sender);
    expect(third.click.startsWith(`${publicUrl}/t/c/`)).toBe(true);
  });

  it('campaign mail from the sender domain uses its tracking domain; mail from another domain uses PUBLIC_URL', async () => {
    const sender = await verifiedSender(pigeon, dns);
    const tracking = await addTrackingDomain(sender);
    dns.setCname(tracking.domain, publicHost);
    await verify(sender, tracking.id);
    const to = `campaign-${process.pid}@example.com`;
    const body = '<p><a href="https://shop.example/sale">Sale</a> {{unsubscribeUrl}}</p>';
    const run = await campaignToAll(pigeon, sender, [to], { campaign: { body } });
    await run.send();
    const arrived = await until(
      () => sink.messages.find((m) => m.to.includes(to)),
      (m) => m !== undefined,
    );
    const message = parseMessage(arrived?.raw ?? '');
    const click = hrefs(message).find((h) => h.includes('/t/c/'));
    expect(click?.startsWith(`${tracking.url}/t/c/`)).toBe(true);
    expect(await followWithHost(click ?? '')).toEqual({ status: 302, location: 'https://shop.example/sale' });
    // The unsubscribe link is not a tracking link: it stays on PUBLIC_URL.
    expect(message.text).toContain(`${publicUrl}/unsubscribe/`);

    const another = await verifiedSender(pigeon, dns);
    const plain = await sendTracked(another);
    expect(plain.click.startsWith(`${publicUrl}/t/c/`)).toBe(true);
    expect(plain.pixel?.startsWith(`${publicUrl}/t/o/`)).toBe(true);
  });

  it('the SDK adds, lists, verifies and removes tracking domains, and runs the sender check', async () => {
    const sender = await verifiedSender(pigeon, dns);
    const sdk = new Pigeon({ apiKey: sender.project.secretKey, baseUrl: pigeon.url, maxRetries: 0 });
    const added = await sdk.trackingDomains.create(`click.${sender.domain}`);
    expect(added.record).toMatchObject({ type: 'CNAME', value: publicHost });
    dns.setCname(added.domain, publicHost);
    expect((await sdk.trackingDomains.verify(added.id)).status).toBe('verified');
    expect((await sdk.trackingDomains.list()).map((t) => t.domain)).toEqual([added.domain]);
    expect((await sdk.trackingDomains.get(added.id)).url).toBe(added.url);
    await sdk.trackingDomains.delete(added.id);
    expect(await sdk.trackingDomains.list()).toEqual([]);

    const check = await sdk.domains.check(added.senderDomain.id);
    expect(check.domain).toBe(sender.domain);
    expect(check.rules.find((r) => r.id === 'dkim')?.status).toBe('pass');
  });
});
