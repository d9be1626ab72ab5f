import type pg from 'pg';
import { preparedRows, queryRows, type Sql, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { FeedConsumer } from '../change-feed/public.js';

/**
 * The change feed's analytics consumer: the events of a batch are added to `event_counts`
 * (project, UTC hour, name, campaign, template, feed part) in one statement (`countFacts`), in
 * the transaction that moves its cursor, so a redone batch is never counted twice. Once an hour is over,
 * `foldFinishedHours` sums its parts into one row (`part = -1`; readers sum over parts anyway) and
 * into `event_counts_daily`. `event_count_facts` (a view, see its migration) says how an event is
 * attributed. Each feed part writes only its own rows,
 * so the parts never wait for each other. The track path pays nothing for it.
 *
 * Its pauses are 5× the feed's (2 s idle, 1 s while events flow, with the default
 * `CHANGE_FEED_POLL_MS`): counts a few seconds behind are fine for charts, and larger batches
 * cost the database less per event.
 */
export const analyticsCountsConsumer: FeedConsumer = {
  name: 'analytics.counts',
  pollFactor: 5,
  wants: sql`ch.kind = 'event'`,
  async handle(client, changes) {
    const ids = changes.flatMap((c) => (c.kind === 'event' && c.eventId ? [c.eventId] : []));
    if (ids.length === 0) return;
    await preparedRows(
      client,
      'analytics.count-events',
      sql`INSERT INTO event_counts AS ec (project_id, hour, name, campaign_id, template_id, part, count)
             SELECT project_id, hour, name, campaign_id, template_id, part, count(*)
             FROM (${countFacts(ids)}) AS f
             GROUP BY 1, 2, 3, 4, 5, 6
             ON CONFLICT (project_id, hour, name, campaign_id, template_id, part)
             DO UPDATE SET count = ec.count + excluded.count`,
    );
  },
};

/**
 * The rows of the view `event_count_facts` for the events `ids` (its migration says how an event is
 * attributed; `event_email_id` is shared), read the way a batch is cheapest: the emails the events
 * name are fetched in one index scan (`= ANY`, bounded by the lowest and highest id so that only
 * their partitions are read) and hash-joined. Through the view, each event probed `emails` on its
 * own: 8.3 µs per event against 5.0 (700 email events, bench/results/2026-11-28-twentieth-sitting.md).
 * `analytics.test.ts` checks that both read the same.
 */
export function countFacts(ids: string[]): Sql {
  return sql`
    WITH ev AS MATERIALIZED (
      SELECT ev.id, ev.project_id, ev.created_at, ev.name, ev.contact_id, event_email_id(ev.name, ev.data) AS email_id
      FROM events ev WHERE ev.id = ANY(${ids}::uuid[]) AND ev.contact_id IS NOT NULL
    ), named AS (
      SELECT email_id FROM ev WHERE email_id IS NOT NULL
    ), em AS (
      SELECT e.id, e.project_id, e.campaign_id, e.template_id FROM emails e
      WHERE e.id = ANY(ARRAY(SELECT email_id FROM named))
        AND e.id BETWEEN (SELECT email_id FROM named ORDER BY 1 LIMIT 1)
                     AND (SELECT email_id FROM named ORDER BY 1 DESC LIMIT 1)
    )
    SELECT ev.id, ev.project_id, date_trunc('hour', ev.created_at, 'UTC') AS hour, ev.name,
           em.campaign_id, em.template_id, contact_changes_part(ev.contact_id) AS part
    FROM ev LEFT JOIN em ON em.id = ev.email_id AND em.project_id = ev.project_id`;
}

/**
 * Forgets the counts of an event name (after `DELETE /events/:eventName` removed its events).
 * Events of that name the consumer reads later are gone from `events`, so they add nothing. The
 * table lock waits for a fold in flight to commit and holds the next one (and the consumer's
 * inserts) off for the delete, whose snapshot then holds the fold's new rows: otherwise a fold
 * that picked the name's rows before the delete would write its folded row and daily total after
 * it. (`SHARE ROW EXCLUSIVE` conflicts with writers, not with readers.)
 */
export async function forgetEventCounts(pool: pg.Pool, projectId: string, name: string): Promise<void> {
  await inTransaction(pool, async (client) => {
    await queryRows(client, sql`LOCK TABLE event_counts IN SHARE ROW EXCLUSIVE MODE`);
    await queryRows(
      client,
      sql`WITH daily AS (DELETE FROM event_counts_daily WHERE project_id = ${projectId} AND name = ${name})
          DELETE FROM event_counts WHERE project_id = ${projectId} AND name = ${name}`,
    );
  });
}

/** The `part` of a row that holds the folded counts of every feed part. */
export const FOLDED_PART = -1;

/**
 * Folds the per-part rows of hours before `before` into one row per (project, hour, name, campaign,
 * template) with `part = -1`, in statements of at most `batch` rows; answers the rows folded. The
 * same statement adds them to `event_counts_daily`, which therefore always holds exactly the folded
 * rows' sums per UTC day and name. A row the consumer is updating is skipped (SKIP LOCKED) and
 * folded by a later run; a late event of a folded hour gets a new per-part row, folded in turn. Sums
 * are the same before and after.
 */
export async function foldFinishedHours(db: Queryable, before: Date, batch: number): Promise<number> {
  let folded = 0;
  for (;;) {
    const [row] = await queryRows<{ n: number }>(
      db,
      sql`WITH picked AS (
            SELECT ctid, project_id, hour, name, campaign_id, template_id, count FROM event_counts
            WHERE part >= 0 AND hour < ${before}::timestamptz
            LIMIT ${batch}::int FOR UPDATE SKIP LOCKED
          ), gone AS (
            DELETE FROM event_counts ec USING picked p WHERE ec.ctid = p.ctid
          ), added AS (
            INSERT INTO event_counts AS ec (project_id, hour, name, campaign_id, template_id, part, count)
            SELECT project_id, hour, name, campaign_id, template_id, ${FOLDED_PART}::smallint, sum(count)
            FROM picked GROUP BY 1, 2, 3, 4, 5
            ON CONFLICT (project_id, hour, name, campaign_id, template_id, part)
            DO UPDATE SET count = ec.count + excluded.count
          ), daily AS (
            INSERT INTO event_counts_daily AS d (project_id, day, name, count)
            SELECT project_id, (hour AT TIME ZONE 'UTC')::date, name, sum(count) FROM picked GROUP BY 1, 2, 3
            ON CONFLICT (project_id, day, name) DO UPDATE SET count = d.count + excluded.count
          )
          SELECT count(*)::int AS n FROM picked`,
    );
    const n = row?.n ?? 0;
    folded += n;
    if (n < batch) return folded;
  }
}
