import type { Queryable } from '../../db/sql.js';
import { type ClaimedEmail, claimEmails } from '../email-states/service.js';

/**
 * The delivery loops' claims, one statement in flight per process: a loop that asks with none
 * running claims at the end of this turn of the event loop with the others that asked in it; loops
 * that ask while one runs wait for it and share the next, which claims `batch` rows for each of them
 * (each loop still gets at most `batch`, the first to ask the first rows). Fewer concurrent claims
 * walk fewer rows that another claim has just locked or updated in the queue's index.
 */
export function sharedClaim(db: Queryable, batch: number): () => Promise<ClaimedEmail[]> {
  let waiting: Array<{ resolve: (rows: ClaimedEmail[]) => void; reject: (err: unknown) => void }> = [];
  let running = false;
  let scheduled = false;
  const claim = async () => {
    scheduled = false;
    running = true;
    const loops = waiting;
    waiting = [];
    try {
      const rows = await claimEmails(db, batch * loops.length);
      loops.forEach((loop, i) => {
        loop.resolve(rows.slice(i * batch, (i + 1) * batch));
      });
    } catch (err) {
      for (const loop of loops) loop.reject(err);
    } finally {
      running = false;
      if (waiting.length > 0) void claim();
    }
  };
  return () =>
    new Promise<ClaimedEmail[]>((resolve, reject) => {
      waiting.push({ resolve, reject });
      if (running || scheduled) return;
      scheduled = true;
      setImmediate(() => void claim());
    });
}
