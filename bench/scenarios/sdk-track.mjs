import { randomBytes } from 'node:crypto';
import { createPigeon, generateIdempotencyKey } from '../../packages/sdk/dist/index.js';
import { alternateSlices, costsLine, sliceCpu, sliceSeconds } from '../lib/alternate.mjs';
import { fmt, r1 } from '../lib/segments.mjs';

/**
 * What the SDK adds to a track: the same requests (POST /v1/track with the public key, data, and an
 * Idempotency-Key, which the SDK always sends) made by 50 concurrent loops in this process, through
 * `pigeon.events.track` and through plain `fetch`, in 10 pairs of short alternating slices
 * (`lib/alternate.mjs`). fetch sends keys made as the SDK makes them (`generateIdempotencyKey`:
 * time-ordered keys cost the server less than random ones), so both sides do the same server work
 * and the ratio is the SDK's own cost (building the request, validation, retry bookkeeping, parsing). Target: SDK req/s ≥ 95% of fetch's (medians).
 */
const PAIRS = 10;
const LOOPS = 50;

export default {
  name: 'sdk-track',
  description: `POST /v1/track through the SDK vs plain fetch, ${LOOPS} loops, ${PAIRS} pairs of alternating slices`,
  pigeonEnv: {},
  target: {
    metric: 'sdkRatioPercent',
    min: 95,
    unit: '%',
    digits: 1,
    label: 'SDK track req/s ≥ 95% of plain fetch (medians)',
  },
  async run(ctx) {
    const tag = randomBytes(4).toString('hex');
    let n = 0;
    const body = () => ({ email: `sdk-${tag}-${++n % 20_000}@sdk.example`, event: 'page-view', data: { step: n % 7 } });
    const pigeon = createPigeon({ apiKey: ctx.publicAuth.authorization.slice('Bearer '.length), baseUrl: ctx.baseUrl });
    const url = new URL('/v1/track', ctx.baseUrl);
    const viaSdk = () => pigeon.events.track(body());
    const viaFetch = async () => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { ...ctx.publicAuth, 'content-type': 'application/json', 'idempotency-key': generateIdempotencyKey() },
        body: JSON.stringify(body()),
      });
      if (res.status !== 200) throw new Error(`track answered ${res.status}`);
      await res.json();
    };
    const phase = async (call, seconds) => {
      const until = performance.now() + seconds * 1000;
      let done = 0;
      await Promise.all(
        Array.from({ length: LOOPS }, async () => {
          while (performance.now() < until) {
            await call();
            done++;
          }
        }),
      );
      return done;
    };
    await phase(viaSdk, ctx.duration); // warm-up, both paths share the server's
    const cpu = sliceCpu(ctx);
    const slices = await alternateSlices({
      pairs: PAIRS,
      seconds: sliceSeconds(ctx.duration),
      variants: ['fetch', 'sdk'],
      measure: async (variant, seconds) => {
        cpu.take();
        const done = await phase(variant === 'sdk' ? viaSdk : viaFetch, seconds);
        return { perSecond: done / seconds, costs: cpu.per(done) };
      },
    });
    const { sdk, fetch: plain } = slices.medians;
    const ratio = (100 * sdk) / plain;
    return {
      sdkRatioPercent: r1(ratio),
      sdkReqPerSec: sdk,
      fetchReqPerSec: plain,
      rounds: slices.rates,
      cpuPerRequest: slices.medianCosts,
      summary:
        `SDK ${fmt(sdk)} req/s vs fetch ${fmt(plain)} req/s (medians of ${PAIRS} alternating slices): ${fmt(ratio, 1)}%; ` +
        costsLine(slices.medianCosts, 'sdk', 'fetch'),
    };
  },
};
