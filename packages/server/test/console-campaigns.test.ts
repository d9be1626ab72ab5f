import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, hasChromium } from './chromium.js';
import { type ConsoleFixture, startConsole } from './console-session.js';
import { until } from './until.js';

/**
 * The console's campaign and analytics pages (issue 61) in Chromium against a real Pigeon whose
 * mail lands in a real SMTP sink: a campaign composed, counted, tested, scheduled and followed to
 * SENT on its page, with every recipient's message in the sink; its stats and the project's
 * analytics as charts; the deliverability pause shown and lifted.
 */

const READERS = Array.from({ length: 6 }, (_, i) => `reader${i}@campaigns.example`);
const LEFT = 'left@campaigns.example';
const TESTER = 'tester@campaigns.example';
const BOUNCER = 'bouncer@campaigns.example';

describe.skipIf(!hasChromium)('the console: campaigns and analytics', () => {
  let c: ConsoleFixture;
  let copyUrl = '';

  // A small health sample, so that one hard bounce among a few messages pauses campaigns (last test).
  beforeAll(async () => {
    c = await startConsole({ HEALTH_MIN_SAMPLE: '5' });
  }, 60_000);
  afterAll(() => c?.stop());

  const delivered = (to: string) => c.sink.messages.filter((m) => m.to.includes(to)).length;

  it('says how to start when there is no campaign', async () => {
    await c.open('campaigns', 'Campaigns');
    await c.page.getByRole('heading', { name: 'No campaigns yet' }).waitFor();
    await checkPage(c.page, 'campaigns-empty');
  });

  it('composes a campaign with its recipient count, sends a test, schedules it in the viewer’s zone and follows it to SENT', async () => {
    const { page } = c;
    for (const email of READERS) await c.sdk.contacts.create({ email, subscribed: true });
    await c.sdk.contacts.create({ email: LEFT, subscribed: false });

    await c.open('campaigns', 'Campaigns');
    await page.getByRole('link', { name: 'New campaign' }).click();
    await page.getByRole('heading', { level: 1, name: 'New campaign' }).waitFor();
    await page.getByLabel('Campaign name').fill('Winter news');
    await page.getByLabel('From address').fill(c.from);
    await page.getByLabel('Subject').fill('Winter is here');
    await page.getByLabel('Body (HTML)').fill('<h1>Winter</h1><p>Snow is coming.</p>');
    await page.frameLocator('iframe').getByRole('heading', { name: 'Winter' }).waitFor();
    // Counted by the server as sending would: the unsubscribed contact is left out.
    await page.locator('.recipient-count').getByText('6 recipients if sent now').waitFor();
    // The same condition builder as segments: the count follows the conditions.
    await page.getByLabel('Contacts matching conditions').check();
    await page.getByRole('group', { name: 'Contacts matching' }).getByLabel('Value', { exact: true }).fill('reader1@');
    await page.locator('.recipient-count').getByText('1 recipient if sent now').waitFor();
    await page.getByLabel('Every contact').check();
    await page.locator('.recipient-count').getByText('6 recipients if sent now').waitFor();
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('heading', { level: 1, name: 'Winter news' }).waitFor();
    await page.waitForURL(/\/campaigns\/[0-9a-f-]{36}$/);
    const campaignId = new URL(page.url()).pathname.split('/').at(-1) as string;
    await page.locator('.recipient-count').getByText('6 recipients if sent now').waitFor();
    await checkPage(page, 'campaign-compose');

    await page.getByLabel('Test address').fill(TESTER);
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByText(`A test is on its way to ${TESTER}`).waitFor();
    await until(
      () => delivered(TESTER),
      (n) => n === 1,
    );

    // Scheduled in the browser's own zone: first at the time offered (an hour ahead)…
    const zone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    await page.getByLabel('At a time').check();
    await page.getByLabel(`Send at (${zone})`).waitFor();
    await page.getByRole('button', { name: 'Schedule…' }).click();
    await page.getByRole('dialog', { name: 'Schedule this campaign?' }).waitFor();
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();
    await page.locator('.page-header .chip', { hasText: 'SCHEDULED' }).waitFor();
    await page.getByText('Waiting until').waitFor();
    await page.getByText(`(${zone})`).first().waitFor();
    const later = await c.sdk.campaigns.get(campaignId);
    expect(new Date(later.scheduledFor ?? '').getTime() - Date.now()).toBeGreaterThan(50 * 60_000);
    await checkPage(page, 'campaign-scheduled');

    // …then moved to a few seconds ahead, typed as a person types it in the datetime-local field.
    const again = page.getByRole('region', { name: 'Another time, or now' });
    await again.getByLabel('At a time').check();
    const at = await page.evaluate(() => {
      const d = new Date(Date.now() + 8_000);
      const p = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
    });
    await again.getByLabel(`Send at (${zone})`).fill(at);
    await again.getByRole('button', { name: 'Schedule…' }).click();
    await page
      .getByRole('dialog', { name: 'Schedule this campaign?' })
      .getByRole('button', { name: 'Schedule' })
      .click();
    await until(
      () => c.sdk.campaigns.get(campaignId),
      (got) => got.status !== 'SCHEDULED' || new Date(got.scheduledFor ?? '').getTime() - Date.now() < 60_000,
    );
    const scheduled = await c.sdk.campaigns.get(campaignId);
    expect(new Date(scheduled.scheduledFor ?? '').getTime()).toBe(
      await page.evaluate((local) => new Date(local).getTime(), at),
    );

    // The page polls: SENDING, then SENT, with no reload.
    await page.locator('.page-header .chip', { hasText: 'SENT' }).waitFor({ timeout: 60_000 });
    await page.locator('.progress', { hasText: 'Sent' }).getByText('6 of 6').waitFor();
    await page.locator('.progress', { hasText: 'Queued' }).getByText('0 of 6').waitFor();
    await until(
      () => READERS.map(delivered),
      (counts) => counts.every((n) => n === 1),
    );
    expect(READERS.map(delivered)).toEqual(READERS.map(() => 1));
    expect(delivered(LEFT)).toBe(0);

    const stats = page.getByRole('region', { name: 'Stats' });
    await stats.getByRole('img', { name: /Engagement of “Winter news”: Sent 6, Delivered \d, Opens 0/ }).waitFor();
    const sentLink = stats.getByRole('link', { name: 'Sent: 6, show these emails' });
    expect(await sentLink.getAttribute('href')).toContain(`emails?campaign=${campaignId}`);
    await checkPage(page, 'campaign-sent');

    // The number opens the mail log's rows behind it: this campaign's six emails.
    await sentLink.click();
    await page.getByRole('heading', { level: 1, name: 'Emails' }).waitFor();
    await page.getByText('Only the emails of').waitFor();
    await page.getByRole('link', { name: READERS[0] }).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(6);
    await page.goBack();

    await page.getByRole('heading', { level: 1, name: 'Winter news' }).waitFor();
    await page.getByRole('button', { name: 'Duplicate' }).click();
    await page.getByRole('heading', { level: 1, name: 'Winter news (copy)' }).waitFor();
    await page.locator('.page-header .chip', { hasText: 'DRAFT' }).waitFor();
    expect(await page.getByLabel('Subject').inputValue()).toBe('Winter is here');
    copyUrl = `campaigns/${new URL(page.url()).pathname.split('/').at(-1)}`;
  });

  it('lists campaigns by status and by search', async () => {
    const { page } = c;
    await c.open('campaigns', 'Campaigns');
    await page.getByRole('link', { name: 'Winter news (copy)' }).waitFor();
    await page.getByRole('link', { name: 'Winter news', exact: true }).waitFor();
    expect(
      await page.getByRole('link', { name: '6 sent by Winter news: show these emails' }).getAttribute('href'),
    ).toMatch(/\/emails\?campaign=[0-9a-f-]{36}$/);
    await checkPage(page, 'campaigns');
    await page.getByLabel('Status').selectOption('SENT');
    await page.waitForURL(/status=SENT/);
    await until(
      () => page.getByRole('link', { name: 'Winter news (copy)' }).count(),
      (n) => n === 0,
    );
    await page.getByRole('link', { name: 'Winter news', exact: true }).waitFor();
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Search').fill('copy');
    await page.waitForURL(/search=copy/);
    await until(
      () => page.getByRole('link', { name: 'Winter news', exact: true }).count(),
      (n) => n === 0,
    );
    await page.getByRole('link', { name: 'Winter news (copy)' }).waitFor();
  });

  it('shows the analytics of what was sent as charts; the range and granularity change the question asked', async () => {
    const { page } = c;
    // Analytics reads hourly counts kept a few seconds behind the events.
    const series = await until(
      () => c.sdk.analytics.timeseries(),
      (s) => s.totals.sent >= READERS.length,
    );
    await c.open('analytics', 'Analytics');
    const over = page.getByRole('region', { name: 'Email over time' });
    await over.locator('.stat', { hasText: 'Sent' }).getByText(String(series.totals.sent)).waitFor();
    await over
      .getByRole('img', { name: new RegExp(`Email per day \\(UTC\\): Sent ${series.totals.sent} in all`) })
      .waitFor();
    await page
      .getByRole('region', { name: 'Top campaigns' })
      .getByRole('link', { name: 'Winter news', exact: true })
      .waitFor();
    await page.getByRole('region', { name: 'Campaigns together' }).getByText('1 campaign sent email').waitFor();
    await page.getByRole('region', { name: 'Project health' }).getByText('Campaigns sending').waitFor();
    await checkPage(page, 'analytics');

    const hourly = page.waitForRequest((r) => /\/analytics\/timeseries\?.*interval=hour/.test(r.url()));
    await page.getByLabel('Per', { exact: true }).selectOption('hour');
    const asked = new URL((await hourly).url());
    await page.waitForURL(/interval=hour/);
    await over.getByRole('img', { name: /Email per hour/ }).waitFor();
    const week = page.waitForRequest(
      (r) =>
        r.url().includes('/analytics/timeseries?') &&
        new URL(r.url()).searchParams.get('from') !== asked.searchParams.get('from'),
    );
    await page.getByLabel('Range', { exact: true }).selectOption('7d');
    const from = new Date(new URL((await week).url()).searchParams.get('from') ?? '');
    expect(Math.round((Date.now() - from.getTime()) / 86_400_000)).toBe(7);
  });

  it('shows the pause a bounce rate over its threshold sets, refuses to send meanwhile, and resumes campaigns', async () => {
    const { page } = c;
    c.sink.failFor(BOUNCER, 550);
    await c.sdk.emails.send({ to: BOUNCER, from: c.from, subject: 'Receipt', body: '<p>Thanks</p>' });
    await c.open('analytics', 'Analytics');
    const health = page.getByRole('region', { name: 'Project health' });
    await until(
      async () => {
        await page.reload();
        await health.getByText(/Campaigns (are paused|sending)/).waitFor();
        return health.getByText('Campaigns are paused').count();
      },
      (n) => n > 0,
    );
    await health.getByText('campaigns pause above 5.00%').waitFor();
    await checkPage(page, 'analytics-paused');

    // Meanwhile a campaign page says why it cannot send, in the API's words.
    await c.open(copyUrl, 'Winter news (copy)');
    await page.getByRole('button', { name: 'Send now…' }).click();
    await page.getByRole('button', { name: 'Send now', exact: true }).click();
    await page
      .getByRole('alert')
      .getByText(/Campaign sending is paused for this project/)
      .waitFor();

    await c.open('analytics', 'Analytics');
    await health.getByRole('button', { name: 'Resume campaigns…' }).click();
    await page
      .getByRole('dialog', { name: 'Resume campaigns?' })
      .getByRole('button', { name: 'Resume campaigns' })
      .click();
    await health.getByText('Campaigns sending').waitFor();
    // Charts, frames and live pages ran under the console's policy without a refusal of its own.
    expect(c.pageErrors.filter((e) => /Content Security Policy/.test(e) && !/sandboxed|about:srcdoc/.test(e))).toEqual(
      [],
    );
  });
});
