import { median } from './contacts.mjs';
import { r1 } from './segments.mjs';

/**
 * Measures two variants of one load in short alternating slices, in A B, B A, A B… order: a
 * checkpoint, an autovacuum or a maintenance job lands on both variants alike, and so does the
 * growth of the tables over the run. Each `measure(variant, seconds)` returns requests per second
 * (and optionally a p99); the result has both series and their medians.
 */
export async function alternateSlices({ pairs, seconds, variants: [a, b], measure }) {
  const rates = { [a]: [], [b]: [] };
  const p99 = { [a]: [], [b]: [] };
  for (let i = 0; i < pairs; i++) {
    for (const variant of i % 2 === 0 ? [a, b] : [b, a]) {
      const { perSecond, p99: tail } = await measure(variant, seconds);
      rates[variant].push(r1(perSecond));
      if (tail !== undefined) p99[variant].push(tail);
    }
  }
  return {
    rates,
    p99,
    medians: { [a]: median(rates[a]), [b]: median(rates[b]) },
    medianP99: { [a]: p99[a].length ? median(p99[a]) : null, [b]: p99[b].length ? median(p99[b]) : null },
  };
}

/** A third of the run's `--duration` (10 s: slices of 3 s), at least 1 s. */
export const sliceSeconds = (duration) => Math.max(1, Math.round(duration / 3));
