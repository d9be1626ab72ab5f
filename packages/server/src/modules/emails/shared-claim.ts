import { oneInFlight } from '../../db/one-in-flight.js';
import type { Queryable } from '../../db/sql.js';
import type { QueueWindowSource } from '../email-states/public.js';
import { type ClaimedEmail, claimEmails } from '../email-states/public.js';

/**
 * The delivery loops' claims, one statement in flight per process (`oneInFlight`): loops that ask
 * while one runs share the next, which claims `batch` rows for each of them (each loop still gets at
 * most `batch`, the first to ask the first rows). With each loop claiming for itself, up to 16
 * claims walked the queue at once, each past the rows the others had just locked or updated: 0.34–0.58
 * ms of PostgreSQL per message in some runs, against 0.08 shared
 * (bench/results/2026-11-28-eighteenth-sitting.md).
 */
export function sharedClaim(db: Queryable, batch: number, window: QueueWindowSource): () => Promise<ClaimedEmail[]> {
  const claim = oneInFlight<null, ClaimedEmail[]>(async (loops) => {
    const rows = await claimEmails(db, batch * loops.length, await window.current());
    return loops.map((_, i) => rows.slice(i * batch, (i + 1) * batch));
  });
  return () => claim(null);
}
