import { Migration } from '@mikro-orm/migrations';

/**
 * `event_count_facts` finds an event's email by id, one index probe per event. As a plain join the
 * planner hashed the whole emails table for each batch of the analytics consumer (a few hundred
 * events against every email ever sent: 15 ms a batch at 20,000 emails, growing with the table).
 * The lookup is now a LATERAL subquery kept apart (OFFSET 0), so it can only be probed by id.
 */
export class Migration20261127050000_event_facts_lookup extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE OR REPLACE VIEW event_count_facts AS
      SELECT ev.id, ev.project_id, date_trunc('hour', ev.created_at, 'UTC') AS hour, ev.name,
             em.campaign_id, em.template_id, contact_changes_part(ev.contact_id) AS part
      FROM events ev
      LEFT JOIN LATERAL (
        SELECT e.campaign_id, e.template_id FROM emails e
        WHERE e.id = CASE WHEN (ev.name LIKE 'email.%' OR ev.name = 'contact.unsubscribed')
                           AND ev.data ->> 'emailId' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                          THEN (ev.data ->> 'emailId')::uuid END
          AND e.project_id = ev.project_id
        OFFSET 0
      ) em ON true
      WHERE ev.contact_id IS NOT NULL;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      CREATE OR REPLACE VIEW event_count_facts AS
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
  }
}
