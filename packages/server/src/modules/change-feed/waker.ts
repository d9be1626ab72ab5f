import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

/** NOTIFY on it and the feed's quick consumers read at once instead of at their next poll. */
export const CHANGE_FEED_CHANNEL = 'pigeon_change_feed';

/**
 * Announces committed writes the feed's consumers should see soon (tracked events: they start
 * workflows and webhooks), with at most one NOTIFY per `gapMs` per process and the last write of a
 * burst announced too. A NOTIFY of its own, outside the writer's transaction: PostgreSQL
 * serializes the commits of transactions that NOTIFY, which the writes' group commit must not pay.
 */
export function feedWaker(db: Queryable, onError: (err: unknown) => void, gapMs = 50): () => void {
  let last = 0;
  let timer: NodeJS.Timeout | undefined;
  const send = () => {
    timer = undefined;
    last = Date.now();
    queryRows(db, sql`SELECT pg_notify(${CHANGE_FEED_CHANNEL}, '')`).catch(onError);
  };
  return () => {
    if (timer) return;
    const wait = last + gapMs - Date.now();
    if (wait <= 0) return send();
    timer = setTimeout(send, wait);
    timer.unref();
  };
}
