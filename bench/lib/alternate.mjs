import { median } from './contacts.mjs';
import { cpuSeconds, descendantsCpuByProgram, ownCpuSeconds } from './process.mjs';
import { r1 } from './segments.mjs';

/**
 * Measures two variants of one load in short alternating slices, in A B, B A, A B… order: a
 * checkpoint, an autovacuum or a maintenance job lands on both variants alike, and so does the
 * growth of the tables over the run. Each `measure(variant, seconds)` returns requests per second
 * (and optionally a p99, and `costs`: named numbers per slice such as CPU µs per request); the
 * result has the series and their medians.
 */
export async function alternateSlices({ pairs, seconds, variants: [a, b], measure }) {
  const rates = { [a]: [], [b]: [] };
  const p99 = { [a]: [], [b]: [] };
  const costs = { [a]: {}, [b]: {} };
  for (let i = 0; i < pairs; i++) {
    for (const variant of i % 2 === 0 ? [a, b] : [b, a]) {
      const { perSecond, p99: tail, costs: sliceCosts = {} } = await measure(variant, seconds);
      rates[variant].push(r1(perSecond));
      if (tail !== undefined) p99[variant].push(tail);
      for (const [name, value] of Object.entries(sliceCosts)) {
        costs[variant][name] ??= [];
        costs[variant][name].push(value);
      }
    }
  }
  const medianCosts = (variant) =>
    Object.fromEntries(Object.entries(costs[variant]).map(([name, values]) => [name, r1(median(values))]));
  return {
    rates,
    p99,
    medians: { [a]: median(rates[a]), [b]: median(rates[b]) },
    medianP99: { [a]: p99[a].length ? median(p99[a]) : null, [b]: p99[b].length ? median(p99[b]) : null },
    medianCosts: { [a]: medianCosts(a), [b]: medianCosts(b) },
  };
}

/**
 * CPU per request over a slice, in µs: Pigeon's API process, its PostgreSQL backends (the
 * statements; the worker processes and PostgreSQL's own background processes are left out), and
 * this harness process (the load generator). `take()` before a slice, then `per(requests)` after.
 */
export function sliceCpu(ctx) {
  const read = () => ({
    api: cpuSeconds(ctx.pigeonPid),
    db: descendantsCpuByProgram(ctx.pigeonPid).backends,
    gen: ownCpuSeconds(),
  });
  let start = read();
  return {
    take: () => {
      start = read();
    },
    per: (requests) => {
      const end = read();
      const us = (key) => r1(((end[key] - start[key]) * 1e6) / Math.max(1, requests));
      return { apiUs: us('api'), dbUs: us('db'), generatorUs: us('gen') };
    },
  };
}

/** A third of the run's `--duration` (10 s: slices of 3 s), at least 1 s. */
export const sliceSeconds = (duration) => Math.max(1, Math.round(duration / 3));

/** The medians of `sliceCpu`'s costs of two variants, for a summary: "CPU µs/request a vs b: API …". */
export function costsLine(medianCosts, a, b) {
  const pair = (key) => `${medianCosts[a][key]} vs ${medianCosts[b][key]}`;
  return `CPU µs/request ${a} vs ${b} (medians): API ${pair('apiUs')}, PostgreSQL backends ${pair('dbUs')}, load generator ${pair('generatorUs')}`;
}
