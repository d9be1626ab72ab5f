import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject, sessionCookie, signUp, uniqueEmail } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { queryRows, sql } from '../../db/query.js';
import { htmlWithoutOpenPixel } from './service.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon(); // no SMTP_URL: the local outbox is the transport
});
afterAll(async () => {
  await pigeon?.stop();
});

const PASSWORD = 'correct horse battery';

async function waitForSent(id: string) {
  for (let i = 0; i < 400; i++) {
    const rows = await queryRows(pigeon.deps.db.pool, sql`SELECT outbox_file FROM emails WHERE id = ${id}`);
    if (rows[0]?.outbox_file) return rows[0].outbox_file as string;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`email ${id} never reached the outbox`);
}

const page = (path: string, cookie?: string) =>
  fetch(`${pigeon.url}${path}`, { headers: cookie ? { cookie } : {}, redirect: 'manual' });

const login = (email: string, password: string, next = '/outbox') =>
  fetch(`${pigeon.url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email, password, next }).toString(),
    redirect: 'manual',
  });

describe('sign-in form', () => {
  const post = (headers: Record<string, string>, body: Record<string, string>) =>
    fetch(`${pigeon.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ next: '/outbox', ...body }).toString(),
      redirect: 'manual',
    });

  it('refuses a sign-in posted from another site (login CSRF), and takes one from its own page', async () => {
    const { owner } = await newProject(pigeon);
    const credentials = { email: owner.user.email, password: PASSWORD };
    const forged: Array<Record<string, string>> = [
      { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      { 'sec-fetch-site': 'same-site', origin: 'https://evil.pigeon.localhost' },
      { origin: 'https://evil.example' },
    ];
    for (const headers of forged) {
      const res = await post(headers, credentials);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    const own = await post({ 'sec-fetch-site': 'same-origin', origin: pigeon.url }, credentials);
    expect(own.status).toBe(303);
    expect(own.headers.get('set-cookie')).toMatch(/pigeon_session=/);
  });

  it('answers a NUL character in the form with 400, not 500', async () => {
    const res = await post({}, { email: 'a\u0000@example.com', password: 'x' });
    expect(res.status).toBe(400);
  });
});

describe('outbox viewer', () => {
  let owner: Awaited<ReturnType<typeof newProject>>;
  const sent: string[] = [];
  beforeAll(async () => {
    owner = await newProject(pigeon);
    const domain = bodyOf(await api(pigeon, owner.auth).domains.create({ body: { domain: 'outbox.example' } }), 201);
    expect(domain.status).toBe('verified');
    for (const subject of ['First <one>', 'Second']) {
      const res = await api(pigeon, owner.auth).emails.send({
        body: {
          to: 'reader@example.com',
          from: { name: 'Team', email: 'team@outbox.example' },
          subject,
          body: '<p>Hello <a href="https://example.com/x">there</a></p>',
        },
      });
      const email = bodyOf(res, 200).data.emails[0]?.email ?? '';
      sent.push(email);
      await waitForSent(email);
    }
  });

  it('sends visitors without a session to the sign-in page and back', async () => {
    const anonymous = await page('/outbox');
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe('/login?next=%2Foutbox');
    const form = await (await page('/login?next=%2Foutbox')).text();
    expect(form).toContain('<label for="password">Password</label>');
    const wrong = await login(owner.owner.user.email, 'wrong password');
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('Email or password is wrong');
    const right = await login(owner.owner.user.email.toUpperCase(), PASSWORD);
    expect(right.status).toBe(303);
    expect(right.headers.get('location')).toBe('/outbox');
    expect(right.headers.get('set-cookie')).toMatch(/pigeon_session=/);
    expect((await login(owner.owner.user.email, PASSWORD, '//evil.example/')).headers.get('location')).toBe('/app/');
  });

  it("lists the member's delivered messages newest first and shows one with its headers and raw .eml", async () => {
    const { cookie } = owner.owner;
    const list = await (await page('/outbox', cookie)).text();
    const first = list.indexOf('First &lt;one&gt;');
    const second = list.indexOf('Second');
    expect(second).toBeGreaterThan(-1);
    expect(first).toBeGreaterThan(second);
    expect(list).toContain('Team &lt;team@outbox.example&gt;');

    const id = sent[0] ?? '';
    const view = await page(`/outbox/${id}`, cookie);
    expect(view.status).toBe(200);
    const html = await view.text();
    expect(html).toMatch(/DKIM-Signature: v=1; a=rsa-sha256;/);
    expect(html).toContain(`Message-ID: &lt;${id}@outbox.example&gt;`);
    expect(html).toContain(`<iframe title="Rendered message" sandbox src="/outbox/${id}/html">`);

    const raw = await page(`/outbox/${id}/raw`, cookie);
    expect(raw.headers.get('content-type')).toBe('message/rfc822');
    const file = readdirSync(join(pigeon.dataDir, 'outbox')).find((f) => f.includes(id) && f.endsWith('.eml')) ?? '';
    expect(await raw.text()).toBe(readFileSync(join(pigeon.dataDir, 'outbox', file), 'utf8'));

    const body = await page(`/outbox/${id}/html`, cookie);
    expect(body.headers.get('content-security-policy')).toMatch(/^sandbox;/);
    const rendered = await body.text();
    expect(rendered).toContain('<p>Hello <a href="');
    expect(rendered).not.toContain('/t/o/'); // viewing here is not an open
  });

  it('shows nothing of the project to a user who is not a member', async () => {
    const stranger = await signUp(pigeon, uniqueEmail('stranger'));
    const list = await (await page('/outbox', stranger.cookie)).text();
    expect(list).toContain('No messages yet');
    for (const path of [`/outbox/${sent[0]}`, `/outbox/${sent[0]}/raw`, `/outbox/${sent[0]}/html`, '/outbox/nope']) {
      const res = await page(path, stranger.cookie);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain('First');
    }
  });

  it('takes the session from the sign-in form', async () => {
    const res = await login(owner.owner.user.email, PASSWORD, `/outbox/${sent[1]}`);
    const cookie = sessionCookie({ headers: res.headers } as never);
    expect(res.headers.get('location')).toBe(`/outbox/${sent[1]}`);
    expect((await page(`/outbox/${sent[1]}`, cookie)).status).toBe(200);
  });
});

describe('htmlWithoutOpenPixel', () => {
  it("removes the open pixel on PUBLIC_URL and on a sender's tracking domain, and keeps other images", () => {
    const logo = '<p>Hi <img src="https://img.example.com/logo.png" width="10" /></p>';
    const pixel = (base: string) =>
      `<img src="${base}/t/o/eyJlIjoiMSJ9.abc.gif" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" />`;
    const html = logo + pixel('https://links.example.com') + pixel('http://localhost:3000');
    expect(htmlWithoutOpenPixel({ html })).toBe(logo);
  });
});
