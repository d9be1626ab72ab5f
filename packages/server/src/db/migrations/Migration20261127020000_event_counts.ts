import { Migration } from '@mikro-orm/migrations';

/**
 * Analytics rollup: events counted per project, UTC hour, name, campaign and template, maintained
 * by the change feed's `analytics.counts` consumer (never by the track path). `part` is the feed
 * part that wrote the row, so the feed's parts, processed concurrently, never wait on each other's
 * rows; readers sum over it.
 *
 * `event_count_facts` says once how an event is counted: its hour, and for the events Pigeon emits
 * about an email (`email.*`, and `contact.unsubscribed` from a link in one), the campaign and
 * template of that email. The cast sits inside the CASE: a tracked event's own `emailId` (any
 * text) is never cast, so it can neither fail the consumer's batch nor claim someone's email. The consumer and the backfill below both read it.
 */
export class Migration20261127020000_event_counts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE event_counts (
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        hour timestamptz NOT NULL,
        name text NOT NULL,
        campaign_id uuid,
        template_id uuid,
        part smallint NOT NULL,
        count bigint NOT NULL
      );
      CREATE UNIQUE INDEX event_counts_key ON event_counts (project_id, hour, name, campaign_id, template_id, part)
        NULLS NOT DISTINCT;
      CREATE INDEX event_counts_campaign ON event_counts (project_id, campaign_id, hour) WHERE campaign_id IS NOT NULL;

      CREATE VIEW event_count_facts AS
      SELECT ev.id, ev.project_id, date_trunc('hour', ev.created_at, 'UTC') AS hour, ev.name,
             em.campaign_id, em.template_id, contact_changes_part(ev.contact_id) AS part
      FROM events ev
      LEFT JOIN emails em
        ON em.id = CASE WHEN (ev.name LIKE 'email.%' OR ev.name = 'contact.unsubscribed')
                         AND ev.data ->> 'emailId' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                        THEN (ev.data ->> 'emailId')::uuid END
       AND em.project_id = ev.project_id
      WHERE ev.contact_id IS NOT NULL;
    `);
    // Backfill, exact without a lock: in one statement (one snapshot), the cursors start at the
    // snapshot's xmin and the backfill counts every visible event except those whose feed row is at
    // or past it, which the consumer will read. Transactions not yet visible are all at or past
    // xmin, so each event is counted exactly once, here or by the consumer.
    this.addSql(`
      WITH snap AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin),
      cursors AS (
        INSERT INTO change_feed_cursors (consumer, part, txid, seq)
        SELECT 'analytics.counts', part, snap.xmin, 0 FROM snap, generate_series(0, 7) AS part
        ON CONFLICT DO NOTHING
      )
      INSERT INTO event_counts (project_id, hour, name, campaign_id, template_id, part, count)
      SELECT f.project_id, f.hour, f.name, f.campaign_id, f.template_id, f.part, count(*)
      FROM event_count_facts f
      WHERE NOT EXISTS (SELECT 1 FROM contact_changes ch, snap WHERE ch.event_id = f.id AND ch.txid >= snap.xmin)
      GROUP BY 1, 2, 3, 4, 5, 6;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      DELETE FROM change_feed_cursors WHERE consumer = 'analytics.counts';
      DROP VIEW event_count_facts;
      DROP TABLE event_counts;
    `);
  }
}
