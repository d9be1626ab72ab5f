import { randomBytes } from 'node:crypto';

/**
 * The scenario's request bodies (also sent by `bench/track-db.mjs`): half a new contact (tagged per
 * run), half one of 10,000 known ones, a page-view or a click with a little data.
 */
export function trackBodies(tag) {
  let n = 0;
  return () => {
    const existing = Math.random() < 0.5;
    const email = existing
      ? `known-${Math.floor(Math.random() * 10_000)}@track.example`
      : `new-${tag}-${++n}@track.example`;
    return JSON.stringify({
      email,
      event: Math.random() < 0.5 ? 'page-view' : 'clicked',
      data: { plan: 'pro', step: n % 7 },
    });
  };
}

/**
 * POST /v1/track with the public key, 50 connections: half the requests track for a new contact,
 * half for one of 10,000 existing ones, each with a little data. Baselines, in the same run:
 * bare-track (node:http + a `pg` pool running the statement Pigeon runs, once per request) and
 * bare-minimal-track (node:http + one statement that upserts the contact and inserts the event,
 * the least a track must do), both on the same database.
 */
export default {
  name: 'track',
  description: 'POST /v1/track (public key), 50% new / 50% existing contacts',
  baseline: ['bare-track', 'bare-minimal-track'],
  // A Pigeon of its own: the shared one holds the million-contact fixture, which the target
  // does not ask for (and autovacuum after that seed would skew this run).
  pigeonEnv: {},
  target: [
    { metric: 'ratioPercent', min: 80, unit: '%', digits: 1, label: 'req/s ≥ 80% of bare-track (same run)' },
    {
      metric: 'ratioPercent:bare-minimal-track',
      min: 80,
      unit: '%',
      digits: 1,
      label: 'req/s ≥ 80% of bare-minimal-track (same run)',
    },
    { metric: 'latencyP99Ms', max: 50, unit: 'ms', label: 'p99 ≤ 50 ms at 50 connections' },
  ],
  async setup(ctx) {
    const tag = randomBytes(4).toString('hex');
    ctx.state.nextBody = trackBodies(tag);
    const probe = await ctx.fetch('/v1/track', {
      method: 'POST',
      headers: ctx.publicAuth,
      json: { email: `probe-${tag}@track.example`, event: 'probe' },
    });
    if (probe.status !== 200) throw new Error(`track probe answered ${probe.status}: ${await probe.text()}`);
  },
  request: (ctx) => ({
    requests: [
      {
        method: 'POST',
        path: '/v1/track',
        headers: { ...ctx.publicAuth, 'content-type': 'application/json' },
        setupRequest: (req) => ({ ...req, body: ctx.state.nextBody() }),
      },
    ],
  }),
};
