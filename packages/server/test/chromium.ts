import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import CHROMIUM_FLAGS from '../../../scripts/chromium-flags.json' with { type: 'json' };

/** Debian's chromium package; `.ci/run` (and `scripts/test-deps.sh`) install it. CHROMIUM_PATH points elsewhere. */
export const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(executablePath);
if (!hasChromium) {
  console.warn(
    `Browser tests skipped: no Chromium at ${executablePath}. Install Debian's package (apt-get install chromium) or set CHROMIUM_PATH to run them.`,
  );
}

export const SCREENSHOTS = join(import.meta.dirname, '../../../test-results');

/** Headless Chromium with this machine kind's flags (scripts/chromium-flags.json, shared with the console bench). */
export async function launchChromium(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({ executablePath, args: CHROMIUM_FLAGS.args });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is (run through the DevTools protocol, so the page's CSP does not apply to it). */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(`${axeSource};0`);
  const found = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: (
            ctx: Document,
          ) => Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }>;
        };
      }
    ).axe;
    const result = await axe.run(document);
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  return found;
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/**
 * A page as a person checks it: no serious or critical accessibility violation (axe-core), and a
 * screenshot at desktop and phone widths in test-results/ (`console-<name>-desktop.png`, `-phone.png`).
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  // Settled: nothing on the page still says it is loading (some pages poll, so the network never idles).
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what a person sees (hidden nodes must not count)
  await page.waitForFunction(() => !/Loading…/.test(document.body.innerText));
  expect(await seriousViolations(page), `axe on ${name}`).toEqual([]);
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: join(SCREENSHOTS, `console-${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  expect(await seriousViolations(page), `axe on ${name} (phone)`).toEqual([]);
  await page.screenshot({ path: join(SCREENSHOTS, `console-${name}-phone.png`), fullPage: true });
  await page.setViewportSize(DESKTOP);
}
