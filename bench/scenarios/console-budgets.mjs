import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/**
 * The console's budgets (issue 58), in Debian's Chromium against this Pigeon with 1,000,000 contacts:
 * - the JavaScript of the first page (signed out: `/app/` → sign-in) at most 250 KB gzipped;
 * - every page interactive within 1 s of navigation (its heading shown, nothing saying "Loading…");
 * - the contacts page paging forward and back over the million, p95 ≤ 300 ms per page (from the
 *   click to the next page's rows on screen).
 * Needs /usr/bin/chromium (`scripts/test-deps.sh` installs it) and a built console.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST = join(ROOT, 'packages/console/dist');
const requireFromServer = createRequire(join(ROOT, 'packages/server/package.json'));

const PAGES = [
  ['overview', '', null],
  ['emails', 'emails', 'Emails'],
  ['events', 'events', 'Events'],
  ['contacts', 'contacts', 'Contacts'],
  ['import', 'contacts/import', 'Import contacts'],
  ['suppressions', 'suppressions', 'Suppressions'],
  ['domains', 'domains', 'Domains'],
  ['keys', 'keys', 'API keys'],
  ['webhooks', 'webhooks', 'Webhooks'],
  ['members', 'members', 'Members'],
  ['settings', 'settings', 'Project settings'],
];
const PAGE_FLIPS = 20;

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const fmt = (n) => Math.round(n).toLocaleString('en-US');

function ownerLogin(dataDir) {
  const text = readFileSync(join(dataDir, 'first-run.txt'), 'utf8');
  const match = /sign in as\s+(\S+)\s+\/\s+(\S+?)\)/.exec(text);
  if (!match) throw new Error('first-run.txt names no owner login');
  return { email: match[1], password: match[2] };
}

export default {
  name: 'console-budgets',
  description: 'the console in Chromium: first-page JavaScript, time to interactive per page, contacts paging over 1M',
  fixtures: ['contacts-1m'],
  target: {
    metric: 'worstBudgetRatio',
    max: 1,
    unit: '×',
    digits: 2,
    label: 'every budget met (worst measured ÷ budget ≤ 1)',
  },
  async run(ctx) {
    const { chromium } = requireFromServer('playwright-core');
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      // 1. The first page's JavaScript, as the browser loaded it, gzipped as a server would send it.
      const scripts = new Set();
      page.on('response', (r) => {
        const path = new URL(r.url()).pathname;
        if (path.startsWith('/app/assets/') && path.endsWith('.js')) scripts.add(path.slice('/app/assets/'.length));
      });
      await page.goto(`${ctx.baseUrl}/app/`);
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      const firstPageKb = [...scripts].reduce(
        (kb, file) => kb + gzipSync(readFileSync(join(DIST, 'assets', file))).length / 1024,
        0,
      );

      // 2. Each page, opened by its address, until it is usable.
      const login = ownerLogin(ctx.dataDir);
      await page.getByLabel('Email').fill(login.email);
      await page.getByLabel('Password').fill(login.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/app\/p\//);
      const base = new URL(page.url()).pathname;
      const interactive = {};
      for (const [name, path, heading] of PAGES) {
        const started = performance.now();
        await page.goto(`${ctx.baseUrl}${base}${path ? `/${path}` : ''}`);
        await page.getByRole('heading', { level: 1, ...(heading ? { name: heading } : {}) }).waitFor();
        await page.waitForFunction(() => !/Loading…/.test(document.body.innerText));
        interactive[name] = performance.now() - started;
      }

      // 3. Contacts: forward PAGE_FLIPS pages, then back, timing each flip to the new rows.
      await page.goto(`${ctx.baseUrl}${base}/contacts`);
      await page.getByRole('button', { name: 'Next' }).waitFor();
      const firstRow = () => page.locator('tbody tr').first().textContent();
      const flip = async (button) => {
        const before = await firstRow();
        const started = performance.now();
        await page.getByRole('button', { name: button }).click();
        await page.waitForFunction((text) => document.querySelector('tbody tr')?.textContent !== text, before);
        return performance.now() - started;
      };
      const flips = [];
      for (let i = 0; i < PAGE_FLIPS; i++) flips.push(await flip('Next'));
      for (let i = 0; i < PAGE_FLIPS; i++) flips.push(await flip('Previous'));
      const p95 = percentile(flips, 95);
      const worstPage = Math.max(...Object.values(interactive));
      const ratios = { firstPageKb: firstPageKb / 250, worstPageMs: worstPage / 1000, pagingP95Ms: p95 / 300 };
      ctx.note(
        `first page: ${scripts.size} scripts, ${firstPageKb.toFixed(1)} KB gzipped (budget 250); ` +
          `interactive after navigation (ms): ${Object.entries(interactive)
            .map(([n, ms]) => `${n} ${fmt(ms)}`)
            .join(', ')} (budget 1,000); ` +
          `contacts over 1M, ${PAGE_FLIPS} pages forward and back: median ${fmt(percentile(flips, 50))} ms, p95 ${fmt(p95)} ms (budget 300)`,
      );
      return {
        firstPageKb: Math.round(firstPageKb * 10) / 10,
        worstPageMs: Math.round(worstPage),
        pagingP95Ms: Math.round(p95),
        worstBudgetRatio: Math.round(Math.max(...Object.values(ratios)) * 100) / 100,
        summary: `JS ${firstPageKb.toFixed(0)} KB gz, slowest page ${fmt(worstPage)} ms, contacts paging p95 ${fmt(p95)} ms`,
      };
    } finally {
      await browser.close();
    }
  },
};
