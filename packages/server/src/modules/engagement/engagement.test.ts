import { Resolver } from 'node:dns/promises';
import type { TrackingMode } from '@pigeon/contract';
import { authenticate } from 'mailauth';
import { assert, beforeAll, describe, expect, it } from 'vitest';
import { api, bodyOf } from '../../../test/api.js';
import { updateEmail } from '../../../test/fixtures/email-states.js';
import { hrefs, type ParsedMessage, pixelUrl, receivedMessage } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { until } from '../../../test/until.js';
import { queryRows, sql } from '../../db/query.js';

const { pigeon, sink, dns } = await startMailingPigeon();

type Sender = Awaited<ReturnType<typeof verifiedSender>>;
type ContentType = 'TRANSACTIONAL' | 'MARKETING' | 'HEADLESS';

let counter = 0;
const recipient = () => `reader-${process.pid}-${++counter}@example.com`;

/** Sends one message through a template of the given type and returns it as the recipient got it. */
async function sendAndReceive(
  sender: Sender,
  opts: { type: ContentType; body: string; to?: string; tracking?: boolean; subscribed?: boolean },
) {
  const template = await api(pigeon, sender.auth).templates.create({
    body: { name: `t${counter}`, subject: 'News', body: opts.body, from: sender.from, type: opts.type },
  });
  expect(template.status).toBe(201);
  const res = await api(pigeon, sender.auth).emails.send({
    body: {
      to: opts.to ?? recipient(),
      template: bodyOf(template, 201).id,
      subscribed: opts.subscribed ?? true,
      ...(opts.tracking === undefined ? {} : { tracking: opts.tracking }),
    },
  });
  expect(res.status).toBe(200);
  const [sent] = bodyOf(res, 200).data.emails;
  assert(sent);
  const message = await receivedMessage(sink, `<${sent.email}@${sender.domain}>`);
  await sentRecorded(sent.email);
  return {
    message,
    emailId: sent.email as string,
    contactId: sent.contact.id as string,
    templateId: bodyOf(template, 201).id,
  };
}

/** Waits until delivery recorded the send (its email.sent event commits with the status). */
async function sentRecorded(emailId: string) {
  for (let i = 0; i < 600; i++) {
    const rows = await queryRows(pigeon.deps.db.pool, sql`SELECT status FROM emails WHERE id = ${emailId}`);
    if (rows[0]?.status === 'SENT') return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`email ${emailId} never recorded as SENT`);
}

const linkTo = (message: ParsedMessage, path: string) => {
  const link = hrefs(message).find((h) => h.startsWith(`${pigeon.url}${path}`));
  if (!link) throw new Error(`no ${path} link in the message`);
  return link;
};

const contactOf = async (id: string) =>
  (await queryRows(pigeon.deps.db.pool, sql`SELECT subscribed FROM contacts WHERE id = ${id}`))[0];

const eventsOf = async (contactId: string, name: string) =>
  (
    await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT data FROM events WHERE contact_id = ${contactId} AND name = ${name} ORDER BY id`,
    )
  ).map((r) => r.data);

const emailRow = async (id: string) =>
  (
    await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT opens, clicks, opened_at, clicked_at, tracked FROM emails WHERE id = ${id}`,
    )
  )[0];

const SUBSCRIPTION_LINKS =
  '<p><a href="{{subscribeUrl}}">Subscribe</a> <a href="{{unsubscribeUrl}}">Unsubscribe</a> <a href="{{manageUrl}}">Preferences</a></p>';

const formPost = (url: string, body: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
    redirect: 'manual',
  });

describe('subscription links from a received email', () => {
  let sender: Sender;
  beforeAll(async () => {
    sender = await verifiedSender(pigeon, dns);
  });

  it('shows a confirmation page on GET of subscribeUrl; its button POSTs and records contact.subscribed once', async () => {
    const { message, contactId, emailId } = await sendAndReceive(sender, {
      type: 'TRANSACTIONAL',
      body: `<p>Confirm: ${SUBSCRIPTION_LINKS}</p>`,
      subscribed: false,
    });
    expect((await contactOf(contactId))?.subscribed).toBe(false);
    const url = linkTo(message, '/subscribe/');
    // A link scanner's GET (any number of them) changes nothing: it gets the page with the button.
    const scanned = await fetch(url);
    expect(scanned.status).toBe(200);
    expect(scanned.headers.get('cache-control')).toBe('no-store');
    const page = await scanned.text();
    expect(page).toContain('Subscribe to Test project?');
    const form = page.match(/<form method="post" action="([^"]+)">/);
    expect(form?.[1]).toBe(new URL(url).pathname);
    expect(page).toContain('name="action" value="subscribe"');
    expect(page).not.toMatch(/<script/i);
    await fetch(url);
    expect((await contactOf(contactId))?.subscribed).toBe(false);
    expect(await eventsOf(contactId, 'contact.subscribed')).toEqual([]);

    // The person's click: a same-origin form POST from that page.
    expect((await formPost(url, 'action=wrong')).status).toBe(400);
    const confirmed = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: pigeon.url,
        'sec-fetch-site': 'same-origin',
      },
      body: 'action=subscribe',
    });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain('You are subscribed');
    expect((await contactOf(contactId))?.subscribed).toBe(true);
    expect((await formPost(url, 'action=subscribe')).status).toBe(200);
    expect(await eventsOf(contactId, 'contact.subscribed')).toEqual([{ source: 'link', emailId }]);
    expect(await (await fetch(url)).text()).toContain('You are already subscribed');
  });

  it("unsubscribes with the page's button, and with the RFC 8058 one-click POST", async () => {
    const first = await sendAndReceive(sender, { type: 'MARKETING', body: SUBSCRIPTION_LINKS });
    const pageUrl = linkTo(first.message, '/unsubscribe/');
    const page = await (await fetch(pageUrl)).text();
    expect(page).toContain('<button type="submit">Unsubscribe</button>');
    expect((await contactOf(first.contactId))?.subscribed).toBe(true); // showing the page changes nothing
    const action = /<form method="post" action="([^"]+)">/.exec(page)?.[1];
    const pressed = await formPost(new URL(action ?? '', pigeon.url).toString(), 'action=unsubscribe');
    expect(pressed.status).toBe(200);
    expect(await pressed.text()).toContain('You are unsubscribed');
    expect((await contactOf(first.contactId))?.subscribed).toBe(false);
    expect(await eventsOf(first.contactId, 'contact.unsubscribed')).toEqual([
      { source: 'link', emailId: first.emailId },
    ]);

    const second = await sendAndReceive(sender, { type: 'MARKETING', body: '<p>No link in the body</p>' });
    const header = second.message.headers.get('list-unsubscribe') ?? '';
    const oneClick = /<(https?:[^>]+)>/.exec(header)?.[1] ?? '';
    const res = await formPost(oneClick, 'List-Unsubscribe=One-Click');
    expect(res.status).toBe(200);
    expect((await contactOf(second.contactId))?.subscribed).toBe(false);
    expect(await eventsOf(second.contactId, 'contact.unsubscribed')).toHaveLength(1);

    // RFC 8058 prefers multipart/form-data for the same POST.
    const third = await sendAndReceive(sender, { type: 'MARKETING', body: '<p>Again</p>' });
    const multipart = new FormData();
    multipart.set('List-Unsubscribe', 'One-Click');
    const url = /<(https?:[^>]+)>/.exec(third.message.headers.get('list-unsubscribe') ?? '')?.[1] ?? '';
    expect((await fetch(url, { method: 'POST', body: multipart })).status).toBe(200);
    expect((await contactOf(third.contactId))?.subscribed).toBe(false);
  });

  it('refuses a tampered token with an error page and changes nothing', async () => {
    const { message, contactId } = await sendAndReceive(sender, { type: 'MARKETING', body: SUBSCRIPTION_LINKS });
    const url = linkTo(message, '/unsubscribe/');
    const token = url.split('/').at(-1) ?? '';
    const [payload, signature] = token.split('.');
    const otherContact = Buffer.from(JSON.stringify({ c: crypto.randomUUID() })).toString('base64url');
    const forged = [
      `${payload}.${signature?.replace(/^./, (ch) => (ch === 'A' ? 'B' : 'A'))}`,
      `${otherContact}.${signature}`,
      payload,
    ];
    for (const bad of forged) {
      const res = await formPost(`${pigeon.url}/unsubscribe/${bad}`, 'List-Unsubscribe=One-Click');
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('This link is not valid');
      expect((await fetch(`${pigeon.url}/subscribe/${bad}`)).status).toBe(400);
    }
    expect((await contactOf(contactId))?.subscribed).toBe(true);
    expect(await eventsOf(contactId, 'contact.unsubscribed')).toEqual([]);
  });

  it('shows and changes the state on the preferences page, and stops working once the contact is deleted', async () => {
    const { message, contactId } = await sendAndReceive(sender, { type: 'MARKETING', body: SUBSCRIPTION_LINKS });
    const url = linkTo(message, '/manage/');
    expect(await (await fetch(url)).text()).toMatch(/is <strong>subscribed<\/strong>/);
    const res = await formPost(url, 'action=unsubscribe');
    expect(await res.text()).toContain('You are unsubscribed');
    expect(await (await fetch(url)).text()).toMatch(/is <strong>not subscribed<\/strong>/);
    expect((await formPost(url, 'action=subscribe')).status).toBe(200);
    expect((await contactOf(contactId))?.subscribed).toBe(true);
    expect((await formPost(url, 'action=bogus')).status).toBe(400);
    expect((await contactOf(contactId))?.subscribed).toBe(true);

    await api(pigeon, sender.auth).contacts.delete({ params: { id: contactId } });
    const gone = await fetch(url);
    expect(gone.status).toBe(404);
    expect(await gone.text()).toContain('This link no longer works');
  });

  it("redirects to the project's own pages when they are set", async () => {
    const own = await verifiedSender(pigeon, dns);
    const patched = await api(pigeon, { cookie: own.owner.cookie }).users.updateProject({
      params: { id: own.project.id },
      body: { unsubscribedRedirectUrl: 'https://example.com/bye', subscribedRedirectUrl: 'https://example.com/hi' },
    });
    expect(patched.body).toMatchObject({ unsubscribedRedirectUrl: 'https://example.com/bye' });
    const { message, contactId } = await sendAndReceive(own, { type: 'MARKETING', body: SUBSCRIPTION_LINKS });
    const bye = await formPost(linkTo(message, '/unsubscribe/'), 'action=unsubscribe');
    expect(bye.status).toBe(303);
    expect(bye.headers.get('location')).toBe('https://example.com/bye');
    const hi = await formPost(linkTo(message, '/subscribe/'), 'action=subscribe');
    expect(hi.status).toBe(303);
    expect(hi.headers.get('location')).toBe('https://example.com/hi');
    expect((await contactOf(contactId))?.subscribed).toBe(true);
    const refused = await api(pigeon, { cookie: own.owner.cookie }).users.updateProject({
      params: { id: own.project.id },
      body: { unsubscribedRedirectUrl: 'javascript:alert(1)' },
    });
    expect(refused.status).toBe(422);
  });
});

describe('List-Unsubscribe headers', () => {
  const dnsResolver = () => {
    const r = new Resolver();
    r.setServers([dns.address]);
    return async (name: string, rr: string) => r.resolve(name, rr as 'TXT');
  };

  it('puts both headers on MARKETING mail, names the mailbox when set, and signs them with DKIM', async () => {
    const sender = await verifiedSender(pigeon, dns);
    await api(pigeon, { cookie: sender.owner.cookie }).users.updateProject({
      params: { id: sender.project.id },
      body: { unsubscribeMailbox: `unsubscribe@${sender.domain}` },
    });
    const { message } = await sendAndReceive(sender, { type: 'MARKETING', body: '<p>Sale</p>' });
    expect(message.headers.get('list-unsubscribe')).toMatch(
      new RegExp(
        `^<${pigeon.url}/unsubscribe/[\\w-]+\\.[\\w-]+>, <mailto:unsubscribe@${sender.domain}\\?subject=unsubscribe>$`,
      ),
    );
    expect(message.headers.get('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    const signed = /\bh=([^;]+)/.exec(message.headers.get('dkim-signature') ?? '')?.[1]?.toLowerCase() ?? '';
    expect(signed.replace(/\s/g, '').split(':')).toEqual(
      expect.arrayContaining(['list-unsubscribe', 'list-unsubscribe-post']),
    );
    const result = await authenticate(message.raw, {
      ip: '127.0.0.1',
      helo: 'localhost',
      sender: sender.from,
      resolver: dnsResolver(),
    });
    expect(result.dkim.results[0]?.status.result).toBe('pass');
  });

  it('puts them on TRANSACTIONAL mail only when its body offers unsubscribeUrl, and never on HEADLESS mail', async () => {
    const sender = await verifiedSender(pigeon, dns);
    const plain = await sendAndReceive(sender, { type: 'TRANSACTIONAL', body: '<p>Your receipt</p>' });
    expect(plain.message.headers.has('list-unsubscribe')).toBe(false);
    expect(plain.message.headers.has('list-unsubscribe-post')).toBe(false);
    const offered = await sendAndReceive(sender, { type: 'TRANSACTIONAL', body: SUBSCRIPTION_LINKS });
    expect(offered.message.headers.get('list-unsubscribe')).toBe(`<${linkTo(offered.message, '/unsubscribe/')}>`);
    expect(offered.message.headers.get('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    const headless = await sendAndReceive(sender, { type: 'HEADLESS', body: SUBSCRIPTION_LINKS });
    expect(headless.message.headers.has('list-unsubscribe')).toBe(false);
  });
});

describe('open and click tracking', () => {
  const BODY = `<html><body><p>Hi</p><a href="https://example.com/pricing?plan=pro&amp;ref=mail">Pricing</a>
    <a href='https://example.com/docs'>Docs</a> <a href="mailto:help@example.com">Mail us</a>
    <a href="{{unsubscribeUrl}}">Unsubscribe</a></body></html>`;

  it('records opens and clicks on the email and as events, folding bursts', async () => {
    const sender = await verifiedSender(pigeon, dns);
    const { message, emailId, contactId, templateId } = await sendAndReceive(sender, {
      type: 'TRANSACTIONAL',
      body: BODY,
    });
    const links = hrefs(message);
    expect(links.filter((h) => h.startsWith(`${pigeon.url}/t/c/`))).toHaveLength(2);
    expect(links).toContain('mailto:help@example.com');
    expect(links.filter((h) => h.startsWith(`${pigeon.url}/unsubscribe/`))).toHaveLength(1);
    const pixel = pixelUrl(message) ?? '';
    expect(message.text).toMatch(/<img src="[^"]+\/t\/o\/[^"]+"[^>]*><\/body>/);

    // Answered before express (http/fast-routes.ts), with the headers every request gets.
    const requestId = '0194b6f6-4c2a-7c4e-9d6a-3f0c2b1a0e55';
    const image = await fetch(pixel, { headers: { 'x-request-id': requestId } });
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/gif');
    expect(image.headers.get('x-request-id')).toBe(requestId);
    expect(image.headers.get('cache-control')).toBe('no-store, max-age=0');
    expect((await image.arrayBuffer()).byteLength).toBeGreaterThan(30);
    const headOnly = await fetch(pixel, { method: 'HEAD' });
    expect([headOnly.status, headOnly.headers.get('content-type')]).toEqual([200, 'image/gif']);
    expect(headOnly.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    // A proxy refetching at once (a query string is not part of the route): folded into the first open.
    expect((await fetch(`${pixel}?cache=bust`)).headers.get('content-type')).toBe('image/gif');
    expect(await emailRow(emailId)).toMatchObject({ opens: 1, opened_at: expect.any(Date) });
    await updateEmail(pigeon.deps.db.pool, emailId, sql`last_opened_at = now() - interval '2 minutes'`);
    await fetch(pixel); // a real second open, after the burst window
    expect((await emailRow(emailId))?.opens).toBe(2);
    const opens = await eventsOf(contactId, 'email.open');
    expect(opens).toEqual([
      { emailId, subject: 'News', templateId },
      { emailId, subject: 'News', templateId },
    ]);

    const click = links.find((h) => h.startsWith(`${pigeon.url}/t/c/`)) ?? '';
    const redirect = await fetch(click, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('https://example.com/pricing?plan=pro&ref=mail');
    await fetch(click, { redirect: 'manual' }); // a double click: folded
    expect(await emailRow(emailId)).toMatchObject({ clicks: 1, clicked_at: expect.any(Date) });
    expect(await eventsOf(contactId, 'email.click')).toEqual([
      { emailId, subject: 'News', templateId, link: 'https://example.com/pricing?plan=pro&ref=mail' },
    ]);
    const docs = links.filter((h) => h.startsWith(`${pigeon.url}/t/c/`))[1] ?? '';
    expect((await fetch(docs, { redirect: 'manual' })).headers.get('location')).toBe('https://example.com/docs');
    expect((await emailRow(emailId))?.clicks).toBe(2); // another link is another click
  });

  it('refuses a click URL altered to point anywhere else', async () => {
    const sender = await verifiedSender(pigeon, dns);
    const { message, emailId } = await sendAndReceive(sender, { type: 'TRANSACTIONAL', body: BODY });
    const click = hrefs(message).find((h) => h.startsWith(`${pigeon.url}/t/c/`)) ?? '';
    const [payload, signature] = (click.split('/').at(-1) ?? '').split('.');
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString());
    const evil = Buffer.from(JSON.stringify({ ...claims, u: 'https://evil.example/phish' })).toString('base64url');
    const res = await fetch(`${pigeon.url}/t/c/${evil}.${signature}`, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toContain('This link is not valid');
    expect((await fetch(`${pigeon.url}/t/c/%E0%A4%A`, { redirect: 'manual' })).status).toBe(400); // not UTF-8
    // A subscription-link token is not a click token either, even though both are signed by Pigeon.
    const unsubscribeToken = linkTo(message, '/unsubscribe/').split('/').at(-1);
    expect((await fetch(`${pigeon.url}/t/c/${unsubscribeToken}`, { redirect: 'manual' })).status).toBe(400);
    expect((await emailRow(emailId))?.clicks).toBe(0);
  });

  it('follows the project mode and the per-send override', async () => {
    const sender = await verifiedSender(pigeon, dns);
    const setMode = (trackingMode: TrackingMode) =>
      api(pigeon, { cookie: sender.owner.cookie }).users.updateProject({
        params: { id: sender.project.id },
        body: { trackingMode },
      });
    const tracked = async (type: ContentType, tracking?: boolean) => {
      const { message, emailId } = await sendAndReceive(sender, { type, body: BODY, tracking });
      const inMessage = pixelUrl(message) !== undefined && hrefs(message).some((h) => h.includes('/t/c/'));
      expect((await emailRow(emailId))?.tracked).toBe(inMessage);
      return inMessage;
    };
    expect(await tracked('TRANSACTIONAL')).toBe(true); // ENABLED by default
    expect(await tracked('TRANSACTIONAL', false)).toBe(false);
    await setMode('MARKETING_ONLY');
    expect(await tracked('TRANSACTIONAL')).toBe(false);
    expect(await tracked('MARKETING')).toBe(true);
    await setMode('DISABLED');
    expect(await tracked('MARKETING')).toBe(false);
    expect(await tracked('TRANSACTIONAL', true)).toBe(true);
  });
});

describe('activity feed', () => {
  it("merges the project's email and contact events, filtered by contact, type and time", async () => {
    const sender = await verifiedSender(pigeon, dns);
    const { message, contactId, emailId } = await sendAndReceive(sender, {
      type: 'MARKETING',
      body: '<a href="https://example.com/a">A</a>',
    });
    await fetch(pixelUrl(message) ?? '');
    await fetch(hrefs(message).find((h) => h.includes('/t/c/')) ?? '', { redirect: 'manual' });
    await formPost(message.headers.get('list-unsubscribe')?.slice(1, -1) ?? '', 'List-Unsubscribe=One-Click');
    await api(pigeon, sender.auth).events.track({ body: { email: recipient(), event: 'signed-up' } });
    const other = await verifiedSender(pigeon, dns);

    const feed = await api(pigeon, sender.auth).activity.list({ query: { contactId } });
    expect(feed.status).toBe(200);
    const feedTypes = bodyOf(feed, 200).data.map((a: { type: string }) => a.type);
    expect(feedTypes.slice(0, 3)).toEqual(['contact.unsubscribed', 'email.click', 'email.open']);
    // Over SMTP the relay's 250 records both, in one statement (same millisecond: either order).
    expect(feedTypes.slice(3).sort()).toEqual(['email.delivery', 'email.sent']);
    expect(bodyOf(feed, 200).data[1]).toMatchObject({
      emailId,
      subject: 'News',
      link: 'https://example.com/a',
      contactId,
    });
    expect(bodyOf(feed, 200).total).toBe(5);

    const clicksAndCustom = await api(pigeon, sender.auth).activity.list({
      query: { types: 'email.click,event', limit: 1 },
    });
    expect(clicksAndCustom.body).toMatchObject({
      total: 2,
      hasMore: true,
      data: [{ type: 'event', name: 'signed-up' }],
    });
    const next = await api(pigeon, sender.auth).activity.list({
      query: { types: 'email.click,event', limit: 1, cursor: bodyOf(clicksAndCustom, 200).cursor ?? undefined },
    });
    expect(bodyOf(next, 200).data).toMatchObject([{ type: 'email.click' }]);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect(bodyOf(await api(pigeon, sender.auth).activity.list({ query: { from: future } }), 200).total).toBe(0);
    expect((await api(pigeon, sender.auth).activity.list({ query: { types: 'email.nope' } })).status).toBe(422);

    // Types and stats read the analytics rollup, which the change feed's consumer fills a moment later.
    const stats = await until(
      () => api(pigeon, sender.auth).activity.stats(),
      (r) => r.status === 200 && r.body.total === 6,
    );
    const types = await api(pigeon, sender.auth).activity.types();
    const count = (t: string) => bodyOf(types, 200).find((x: { type: string }) => x.type === t)?.count;
    expect([count('email.sent'), count('email.open'), count('event'), count('email.bounce')]).toEqual([1, 1, 1, 0]);
    expect(bodyOf(stats, 200).total).toBe(6); // sent, delivery, open, click and unsubscribed of the reader, and the tracked event
    expect(bodyOf(stats, 200).byType).toContainEqual({ type: 'contact.unsubscribed', count: 1 });
    expect(bodyOf(stats, 200).byDay.reduce((sum: number, d: { count: number }) => sum + d.count, 0)).toBe(6);
    const recent = await api(pigeon, sender.auth).activity.recentCount({ query: { minutes: 5, types: 'email.open' } });
    expect(bodyOf(recent, 200).count).toBe(1);
    // Another project sees none of it.
    const theirs = await api(pigeon, other.auth).activity.list({ query: { contactId } });
    expect(theirs.body).toMatchObject({ data: [], total: 0 });
  });
});

describe('outbox viewer with an SMTP transport', () => {
  it('is not mounted: mail left the machine, there is no outbox to show', async () => {
    // untyped: outside the contract (the outbox, not mounted here)
    const res = await pigeon.request('GET', '/outbox');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});
