import { engagementCounts, trackedEmailPaths } from '../lib/engagement.mjs';

/**
 * GET the click redirect (302) of one of 5,000 tracked emails per request (a counted click or one folded by the 60 s burst rule). Each of the 5,000 emails is hit once in the first pass; after that, repeats within
 * 60 s are folded (no count, no event), as an image proxy's or link scanner's refetches would be.
 */
export default {
  name: 'engagement-click',
  description:
    'GET the click redirect (302) of one of 5,000 tracked emails per request (a counted click or one folded by the 60 s burst rule)',
  baseline: 'bare-http',
  expectStatus: 302, // the redirect to the original link is the right answer
  pigeonEnv: {},
  target: { metric: 'reqPerSec', min: 1000, unit: 'req/s', label: '≥ 1,000 req/s' },
  async setup(ctx) {
    const paths = (await trackedEmailPaths(ctx)).map((p) => p.click);
    let n = 0;
    ctx.state.nextPath = () => paths[n++ % paths.length];
  },
  request: (ctx) => ({
    requests: [{ method: 'GET', path: '/', setupRequest: (req) => ({ ...req, path: ctx.state.nextPath() }) }],
  }),
  async after(ctx) {
    const c = await engagementCounts(ctx);
    ctx.note(
      `recorded after warm-up + measured run: ${c.clicks.toLocaleString('en-US')} clicks counted, ` +
        `${c.click_events.toLocaleString('en-US')} email.click events (the rest folded by the burst rule)`,
    );
  },
};
