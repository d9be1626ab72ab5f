import { randomBytes, randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { fmt, median, r1 } from '../lib/segments.mjs';

/**
 * What an Idempotency-Key costs a track (the SDK sends one on every track): the `track` scenario's
 * requests, 50 connections, once plain and once with a fresh key per request, 3 rounds each,
 * interleaved, on one Pigeon. The key is claimed inside the track statement, so a keyed track
 * should cost about what a plain one does. Target: keyed req/s ≥ 80% of plain (medians).
 */
const ROUNDS = 3;

export default {
  name: 'track-keyed',
  description: `POST /v1/track with an Idempotency-Key vs without, ${ROUNDS} interleaved rounds each`,
  pigeonEnv: {},
  target: {
    metric: 'keyedRatioPercent',
    min: 80,
    unit: '%',
    digits: 1,
    label: 'keyed track req/s ≥ 80% of plain track (medians)',
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
    const round = (keyed) =>
      new Promise((resolve, reject) =>
        autocannon(
          {
            url: new URL('/v1/track', ctx.baseUrl).href,
            connections: ctx.connections,
            duration: ctx.duration,
            requests: [
              {
                method: 'POST',
                headers: { ...ctx.publicAuth, 'content-type': 'application/json' },
                setupRequest: (req) => ({
                  ...req,
                  body: body(),
                  ...(keyed && { headers: { ...req.headers, 'idempotency-key': randomUUID() } }),
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
    await round(false); // warm-up
    const runs = { plain: [], keyed: [], keyedP99: [], plainP99: [] };
    for (let i = 0; i < ROUNDS; i++) {
      const plain = await round(false);
      const keyed = await round(true);
      runs.plain.push(r1(plain.requests.average));
      runs.plainP99.push(plain.latency.p99);
      runs.keyed.push(r1(keyed.requests.average));
      runs.keyedP99.push(keyed.latency.p99);
    }
    const keyed = median(runs.keyed);
    const plain = median(runs.plain);
    const { rows } = await ctx.sql(`SELECT count(*)::int AS n FROM idempotency_keys WHERE request = 'POST /v1/track'`);
    return {
      keyedRatioPercent: r1((100 * keyed) / plain),
      keyedReqPerSec: keyed,
      plainReqPerSec: plain,
      rounds: runs,
      summary:
        `keyed ${fmt(keyed)} req/s vs plain ${fmt(plain)} req/s (medians of ${ROUNDS}): ${fmt((100 * keyed) / plain, 1)}%; ` +
        `p99 keyed ${median(runs.keyedP99)} ms, plain ${median(runs.plainP99)} ms; ${rows[0].n.toLocaleString('en-US')} track keys stored`,
    };
  },
};
