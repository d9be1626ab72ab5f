import { engagementCounts, trackedEmailPaths } from './engagement.mjs';

/**
 * The engagement scenarios: GET the open pixel or the click redirect of one of 5,000 tracked
 * emails per request. Each email is hit once in the first pass; after that, repeats within 60 s
 * are folded (no count, no event), as an image proxy's or link scanner's refetches would be.
 */
/**
 * Issue 17: twice the ratio to bare node:http these routes had before they left express, measured
 * at commit 3f29aef interleaved with this code on a quiet machine (2026-11-25): open 8.8–9.0%,
 * click 6.7–7.0%.
 */
const RATIO_BEFORE = { open: 8.9, click: 6.85 };

export const engagementScenario = (kind, { description, expectStatus }) => ({
  name: `engagement-${kind}`,
  description,
  baseline: 'bare-http',
  expectStatus,
  pigeonEnv: {},
  target: {
    metric: 'ratioPercent',
    min: 2 * RATIO_BEFORE[kind],
    unit: '%',
    digits: 1,
    label: `req/s ≥ ${2 * RATIO_BEFORE[kind]}% of bare-http (2× the ${RATIO_BEFORE[kind]}% before, issue 17)`,
  },
  async setup(ctx) {
    const paths = (await trackedEmailPaths(ctx)).map((p) => p[kind]);
    let n = 0;
    ctx.state.nextPath = () => paths[n++ % paths.length];
  },
  request: (ctx) => ({
    requests: [{ method: 'GET', path: '/', setupRequest: (req) => ({ ...req, path: ctx.state.nextPath() }) }],
  }),
  async after(ctx) {
    const c = await engagementCounts(ctx);
    ctx.note(
      `recorded after warm-up + measured run: ${c[`${kind}s`].toLocaleString('en-US')} ${kind}s counted, ` +
        `${c[`${kind}_events`].toLocaleString('en-US')} email.${kind} events (the rest folded by the burst rule)`,
    );
  },
});
