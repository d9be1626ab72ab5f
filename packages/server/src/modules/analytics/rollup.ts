import { preparedRows, queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import type { FeedConsumer } from '../change-feed/feed.js';

/**
 * The change feed's analytics consumer: the events of a batch are added to `event_counts`
 * (project, UTC hour, name, campaign, template, feed part) in one statement, in the transaction
 * that moves its cursor, so a redone batch is never counted twice. `event_count_facts` (a view,
 * see its migration) says how an event is attributed. Each feed part writes only its own rows,
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
             FROM event_count_facts WHERE id = ANY(${ids}::uuid[])
             GROUP BY 1, 2, 3, 4, 5, 6
             ON CONFLICT (project_id, hour, name, campaign_id, template_id, part)
             DO UPDATE SET count = ec.count + excluded.count`,
    );
  },
};

/**
 * Forgets the counts of an event name (after `DELETE /events/:eventName` removed its events).
 * Events of that name the consumer reads later are gone from `events`, so they add nothing.
 */
export async function forgetEventCounts(db: Queryable, projectId: string, name: string): Promise<void> {
  await queryRows(db, sql`DELETE FROM event_counts WHERE project_id = ${projectId} AND name = ${name}`);
}
