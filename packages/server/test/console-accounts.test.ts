import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows, sql } from '../src/db/query.js';
import { newProject, outboxMessages, uniqueEmail } from './accounts.js';
import { api } from './api.js';
import { checkPage, hasChromium, launchChromium } from './chromium.js';
import { startTestPigeon, type TestPigeon } from './helpers.js';

/**
 * The console's pages before sign-in (issue 58), in Chromium: sign-up, a password reset and an
 * email verification from the links Pigeon mails, an invitation accepted by a new account, and the
 * single sign-on buttons of the configured providers.
 */

const PASSWORD = 'correct horse battery';

describe.skipIf(!hasChromium)('the console before sign-in', () => {
  let pigeon: TestPigeon;
  let browser: Browser;

  beforeAll(async () => {
    pigeon = await startTestPigeon(); // the local outbox: mailed links are read from its files
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await pigeon?.stop();
  });

  /** The newest console link of `path` mailed to `to` (quoted-printable undone). */
  async function mailedLink(to: string, path: string): Promise<string> {
    const pattern = new RegExp(`(http://\\S+/app/${path}#token=[A-Za-z0-9_-]+)`);
    for (let i = 0; i < 200; i++) {
      const mail = outboxMessages(pigeon)
        .filter((m) => m.includes(`To: ${to}`))
        .reverse()
        .find((m) => pattern.test(m));
      const link = mail && pattern.exec(mail)?.[1];
      if (link) return link;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no ${path} link mailed to ${to}`);
  }

  async function fresh(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    return page;
  }

  it('signs up, then confirms the address from the mailed link with a click', async () => {
    const page = await fresh();
    const email = uniqueEmail('console-signup');
    await page.goto(`${pigeon.url}/app/sign-in`);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Create an account' }).waitFor();
    await checkPage(page, 'sign-up');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    // The API's message next to the field it names.
    await page
      .getByText(/at least 10 characters/)
      .first()
      .waitFor();
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Create a project' }).waitFor();

    const link = await mailedLink(email, 'verify-email');
    await page.goto(link);
    await page.getByRole('heading', { level: 1, name: 'Confirm your email address' }).waitFor();
    await checkPage(page, 'verify-email');
    await page.getByRole('button', { name: 'Confirm my address' }).click();
    await page.getByText(`${email} is confirmed`).waitFor();
    const [user] = await queryRows(pigeon.deps.db.pool, sql`SELECT email_verified FROM users WHERE email = ${email}`);
    expect(user?.email_verified).toBe(true);
    await page.context().close();
  });

  it('resets a forgotten password from the mailed link; the new one signs in', async () => {
    const page = await fresh();
    const { owner } = await newProject(pigeon);
    await page.goto(`${pigeon.url}/app/sign-in`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await checkPage(page, 'forgot-password');
    await page.getByLabel('Email').fill(owner.user.email);
    await page.getByRole('button', { name: 'Mail me a link' }).click();
    await page.getByText(/a link to reset its password is on its way/).waitFor();
    const link = await mailedLink(owner.user.email, 'reset-password');
    await page.goto(link);
    await page.getByRole('heading', { level: 1, name: 'Set a new password' }).waitFor();
    await checkPage(page, 'reset-password');
    await page.getByLabel('New password').fill('another long password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('Your password is changed').waitFor();
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('Email').fill(owner.user.email);
    await page.getByLabel('Password').fill('another long password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Test project' }).waitFor();
    await page.context().close();
  });

  it('accepts an invitation mailed to an address without an account: sign up from it, one click joins', async () => {
    const { owner, project } = await newProject(pigeon);
    const invited = uniqueEmail('console-invited');
    const res = await api(pigeon, { cookie: owner.cookie }).projects.inviteMember({
      params: { id: project.id },
      body: { email: invited, role: 'ADMIN' },
    });
    expect(res.status).toBe(201);
    const page = await fresh();
    await page.goto(await mailedLink(invited, 'accept-invitation'));
    await page.waitForURL(/\/app\/sign-in\?next=/);
    await page.getByRole('link', { name: 'Create an account' }).click();
    // The sign-in form (its own Email and Password) stays on screen while the sign-up page's code
    // loads: fill the fields only once the sign-up page is there.
    await page.getByRole('heading', { level: 1, name: 'Create an account' }).waitFor();
    await page.getByLabel('Email').fill(invited);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Join a project' }).waitFor();
    await checkPage(page, 'accept-invitation');
    await page.getByRole('button', { name: 'Accept the invitation' }).click();
    await page.getByRole('heading', { level: 1, name: 'Test project' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/app/p/${project.id}`);
    await page.context().close();
  });

  it('offers a button per configured sign-in provider, which starts its sign-in and comes back to the console', async () => {
    const sso = await startTestPigeon({
      env: {
        OIDC_ISSUER_URL: 'http://127.0.0.1:9/issuer',
        OIDC_CLIENT_ID: 'pigeon',
        OIDC_CLIENT_SECRET: 'secret',
        OIDC_DISPLAY_NAME: 'Acme sign-on',
      },
    });
    const page = await fresh();
    try {
      await page.goto(`${sso.url}/app/sign-in?next=%2Fp%2Fx%2Femails`);
      const button = page.getByRole('link', { name: 'Acme sign-on' });
      await button.waitFor();
      const href = new URL((await button.getAttribute('href')) ?? '');
      expect(href.origin).toBe(sso.url);
      expect(href.searchParams.get('next')).toBe('/app/p/x/emails');
      expect(await page.getByRole('link', { name: 'Create an account' }).count()).toBe(1);
    } finally {
      await page.context().close();
      await sso.stop();
    }
  });
});
