import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows, sql } from '../src/db/query.js';
import { newProject, outboxMessages } from './accounts.js';
import { api, bodyOf } from './api.js';
import { hasChromium, launchChromium, SCREENSHOTS } from './chromium.js';
import { startTestPigeon, type TestPigeon } from './helpers.js';

describe.skipIf(!hasChromium)('pages in a real browser (headless Chromium)', () => {
  let pigeon: TestPigeon;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof newProject>>;
  let contactId: string;

  beforeAll(async () => {
    pigeon = await startTestPigeon(); // local outbox: the received email is the .eml it wrote
    browser = await launchChromium();
    owner = await newProject(pigeon);
    const client = api(pigeon, owner.auth);
    await client.domains.create({ body: { domain: 'browser.example' } });
    const template = await client.templates.create({
      body: {
        name: 'Newsletter',
        subject: 'Our November news',
        body: '<h1>News</h1><p>Hello {{name ?? "reader"}}</p><p><a href="{{unsubscribeUrl}}">Unsubscribe</a></p>',
        from: 'news@browser.example',
        type: 'MARKETING',
      },
    });
    const sent = await client.emails.send({
      body: { to: 'reader@example.com', template: bodyOf(template, 201).id, subscribed: true },
    });
    contactId = bodyOf(sent, 200).data.emails[0]?.contact.id ?? '';
  });
  afterAll(async () => {
    await browser?.close();
    await pigeon?.stop();
  });

  async function receivedUnsubscribeLink(): Promise<string> {
    for (let i = 0; i < 400; i++) {
      const mail = outboxMessages(pigeon).find((m) => m.includes('Subject: Our November news'));
      const link = mail && /href="([^"]+\/unsubscribe\/[^"]+)"/.exec(mail)?.[1];
      if (link) return link;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('the newsletter never reached the outbox');
  }

  it('unsubscribes with the button on the page linked from the email', async () => {
    const page = await browser.newPage();
    await page.goto(await receivedUnsubscribeLink());
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Unsubscribe from Test project?');
    await page.getByRole('button', { name: 'Unsubscribe' }).click();
    await page.getByRole('heading', { name: 'You are unsubscribed' }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'browser-unsubscribed.png') });
    const rows = await queryRows(pigeon.deps.db.pool, sql`SELECT subscribed FROM contacts WHERE id = ${contactId}`);
    expect(rows[0]?.subscribed).toBe(false);
    await page.close();
  });

  it('signs in and opens the outbox viewer on the message', async () => {
    const page = await browser.newPage();
    await page.goto(`${pigeon.url}/outbox`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.getByLabel('Email').fill(owner.owner.user.email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Outbox' }).waitFor();
    await page.getByRole('link', { name: 'Our November news' }).click();
    await page.getByRole('heading', { name: 'Our November news' }).waitFor();
    const rendered = page.frameLocator('iframe[title="Rendered message"]');
    await expect(rendered.getByRole('heading', { name: 'News' }).textContent()).resolves.toBe('News');
    await expect(page.locator('pre').textContent()).resolves.toMatch(
      /List-Unsubscribe-Post: List-Unsubscribe=One-Click/,
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'browser-outbox.png'), fullPage: true });
    await page.close();
  });

  it('refuses a form that another origin of the same site posts with the session cookie; takes the same POST from Pigeon itself', async () => {
    const { cookie } = owner.owner;
    const context = await browser.newContext();
    await context.addCookies([
      {
        name: cookie.slice(0, cookie.indexOf('=')),
        value: cookie.slice(cookie.indexOf('=') + 1),
        url: pigeon.url,
        httpOnly: true,
        sameSite: 'Lax',
      },
    ]);
    const target = `${pigeon.url}/users/@me/projects/${owner.project.id}/regenerate-keys`;
    // Another port of the same host: the same *site* (SameSite=Lax sends the cookie), another *origin*.
    const attacker = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(
        `<form method="post" action="${target}" enctype="text/plain"><input name='{"a":"' value='"}'></form>` +
          '<script>document.forms[0].submit()</script>',
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      const page = await context.newPage();
      const answered = page.waitForResponse((r) => r.url() === target);
      const { hostname } = new URL(pigeon.url);
      await page.goto(`http://${hostname}:${(attacker.address() as AddressInfo).port}/`);
      const forged = await answered;
      // 403 with this message, not 401: the browser did send the cookie, and Pigeon refused the origin.
      expect(forged.status()).toBe(403);
      expect((await forged.json()).error.message).toMatch(/another site/);
      const keys = bodyOf(await api(pigeon, { cookie }).users.listProjects(), 200);
      expect(keys.map((p) => p.secretKey)).toContain(owner.project.secretKey);

      // The same POST from a page of Pigeon's own origin goes through (a JSON answer as the page:
      // Pigeon's HTML pages forbid scripts).
      await page.goto(`${pigeon.url}/users/@me`);
      const status = await page.evaluate(async (url) => (await fetch(url, { method: 'POST' })).status, target);
      expect(status).toBe(200);
      const rotated = bodyOf(await api(pigeon, { cookie }).users.listProjects(), 200);
      expect(rotated.map((p) => p.secretKey)).not.toContain(owner.project.secretKey);
    } finally {
      await context.close();
      await new Promise((resolve) => attacker.close(resolve));
    }
  });
});
