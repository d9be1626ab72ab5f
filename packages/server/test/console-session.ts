import type { Browser, Page } from 'playwright-core';
import { Pigeon } from '../../sdk/dist/index.js';
import { DESKTOP, launchChromium } from './chromium.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { startTestPigeon, type TestPigeon } from './helpers.js';
import { verifiedSender } from './sending.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

export interface ConsoleFixture {
  pigeon: TestPigeon;
  /** Where Pigeon delivers: every message a page sends ends up here. */
  sink: SmtpSink;
  dns: TestDnsServer;
  browser: Browser;
  /** Chromium at 1280×800, signed in as the project's owner. */
  page: Page;
  /** The customer's backend: the SDK with the project's secret key. */
  sdk: Pigeon;
  projectId: string;
  /** A sender address on the project's verified domain. */
  from: string;
  /** Messages the page logged as errors (CSP refusals among them). */
  pageErrors: string[];
  /** Opens a console page of the project by its path (a deep link, '' for the overview) and waits for its heading. */
  open: (path: string, heading: string | RegExp) => Promise<void>;
  stop: () => Promise<void>;
}

/**
 * The one set-up of a console test file that works inside a project: a Pigeon delivering to a real
 * SMTP sink and resolving with a real DNS server, a project whose owner is signed in (the session
 * cookie put in the browser, so tests start on the page they are about) with a verified sender
 * domain, and Chromium. Call it in `beforeAll` and `stop()` it in `afterAll`.
 */
export async function startConsole(env: Record<string, string> = {}): Promise<ConsoleFixture> {
  const [sink, dns] = await Promise.all([startSmtpSink(), startDnsServer()]);
  const pigeon = await startTestPigeon({
    env: { SMTP_URL: sink.url, DNS_SERVERS: dns.address, CHANGE_FEED_POLL_MS: '50', ...env },
  });
  const sender = await verifiedSender(pigeon, dns);
  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: DESKTOP });
  const [name, value] = sender.owner.cookie.split('=', 2) as [string, string];
  await context.addCookies([{ name, value, url: pigeon.url }]);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const pageErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  const projectId = sender.project.id;
  return {
    pigeon,
    sink,
    dns,
    browser,
    page,
    sdk: new Pigeon({ apiKey: sender.project.secretKey, baseUrl: pigeon.url }),
    projectId,
    from: sender.from,
    pageErrors,
    open: async (path, heading) => {
      await page.goto(`${pigeon.url}/app/p/${projectId}${path ? `/${path}` : ''}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    },
    stop: async () => {
      await browser.close();
      await pigeon.stop();
      await Promise.all([sink.close(), dns.close()]);
    },
  };
}
