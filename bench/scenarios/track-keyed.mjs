import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { generateIdempotencyKey } from '../../packages/sdk/dist/index.js';
import { alternateSlices, costsLine, sliceCpu, sliceSeconds } from '../lib/alternate.mjs';
import { fmt, r1 } from '../lib/segments.mjs';

/**
 * What an Idempotency-Key costs a track (the SDK sends one on every track): the `track` scenario's
 * requests, 50 connections, plain and with a fresh key per request, in 10 pairs of short
 * alternating slices on one Pigeon (`lib/alternate.mjs`: a checkpoint or a vacuum lands on both
 * alike). The key is claimed inside the track statement, so a keyed track should cost about what a
 * plain one does. Target: keyed req/s ≥ 95% of plain (medians).
 *
 * Both variants send one fresh key made the SDK's way (`generateIdempotencyKey`: a UUID version 7,
 * in time order) in a header: the keyed one as its Idempotency-Key, the plain one as an
 * X-Request-Id, which Pigeon ignores. (With random version-4 keys, each key lands on a random page
 * of the key index: PostgreSQL spent ~18 µs more per keyed track instead of ~7, 2026-11-28.) The
 * load generator shares the machine, and when the keyed variant alone made a header per request it
 * cost the generator 8.9 µs more per request
 * (14%; one run, 2026-11-27), counted against Pigeon. The CPU per request of Pigeon's API process,
 * its PostgreSQL backends and the generator is noted per variant (`sliceCpu`), so the ratio can be
 * read by part.
 */
const PAIRS = 10;

export default {
  name: 'track-keyed',
  description: `POST /v1/track with an Idempotency-Key vs without, ${PAIRS} pairs of alternating slices`,
  pigeonEnv: {},
  target: {
    metric: 'keyedRatioPercent',
    min: 95,
    unit: '%',
    digits: 1,
    label: 'keyed track req/s ≥ 95% of plain track (medians)',
  },
  async run(ctx) {
    const tag = randomBytes(4).toString('hex');
    let n = 0;
    const body = () =>
      JSON.stringify({
        email:
          Math.random() < 0.5 ? `known-${Math.floor(Math.random() * 10_000)}@k.example` : `new-${tag}-${++n}@k.example`,
        event: 'page-view',
        data: { plan: 'pro', step: n % 7 },
      });
    const round = (keyed, duration) =>
      new Promise((resolve, reject) =>
        autocannon(
          {
            url: new URL('/v1/track', ctx.baseUrl).href,
            connections: ctx.connections,
            duration,
            requests: [
              {
                method: 'POST',
                headers: { ...ctx.publicAuth, 'content-type': 'application/json' },
                setupRequest: (req) => ({
                  ...req,
                  body: body(),
                  headers: { ...req.headers, [keyed ? 'idempotency-key' : 'x-request-id']: generateIdempotencyKey() },
                }),
              },
            ],
          },
          (err, result) => {
            if (err) return reject(err);
            if (result.non2xx || result.errors)
              return reject(new Error(`${result.non2xx} non-2xx, ${result.errors} errors`));
            resolve(result);
          },
        ),
      );
    await round(false, ctx.duration); // warm-up
    const cpu = sliceCpu(ctx);
    const slices = await alternateSlices({
      pairs: PAIRS,
      seconds: sliceSeconds(ctx.duration),
      variants: ['plain', 'keyed'],
      measure: async (variant, seconds) => {
        cpu.take();
        const r = await round(variant === 'keyed', seconds);
        return { perSecond: r.requests.total / seconds, p99: r.latency.p99, costs: cpu.per(r.requests.total) };
      },
    });
    const { keyed, plain } = slices.medians;
    const { rows } = await ctx.sql(`SELECT count(*)::int AS n FROM idempotency_keys WHERE request = 'POST /v1/track'`);
    return {
      keyedRatioPercent: r1((100 * keyed) / plain),
      keyedReqPerSec: keyed,
      plainReqPerSec: plain,
      rounds: { ...slices.rates, keyedP99: slices.p99.keyed, plainP99: slices.p99.plain },
      cpuPerRequest: slices.medianCosts,
      summary:
        `keyed ${fmt(keyed)} req/s vs plain ${fmt(plain)} req/s (medians of ${PAIRS} alternating slices): ` +
        `${fmt((100 * keyed) / plain, 1)}%; p99 keyed ${slices.medianP99.keyed} ms, plain ${slices.medianP99.plain} ms; ` +
        `${rows[0].n.toLocaleString('en-US')} track keys stored; ${costsLine(slices.medianCosts, 'keyed', 'plain')}`,
    };
  },
};
