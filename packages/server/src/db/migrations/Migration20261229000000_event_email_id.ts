import { Migration } from '@mikro-orm/migrations';

const UUID_TEXT = `'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'`;

/** The view, with `emailId` the expression that names an event's email (`ev` is the event). */
const factsView = (emailId: string) => `
      CREATE OR REPLACE VIEW event_count_facts AS
      SELECT ev.id, ev.project_id, date_trunc('hour', ev.created_at, 'UTC') AS hour, ev.name,
             em.campaign_id, em.template_id, contact_changes_part(ev.contact_id) AS part
      FROM events ev
      LEFT JOIN LATERAL (
        SELECT e.campaign_id, e.template_id FROM emails e
        WHERE e.id = ${emailId} AND e.project_id = ev.project_id
        OFFSET 0
      ) em ON true
      WHERE ev.contact_id IS NOT NULL;`;

/**
 * `event_email_id(name, data)`: the email an event names (email.* events and an unsubscribe made
 * from a message carry its id in `data.emailId`), or null. One definition for the view
 * `event_count_facts` (bulk loads read it) and the analytics consumer's batch statement
 * (`modules/analytics/rollup.ts`), which reads the same facts with one index scan of `emails` per
 * batch instead of a probe per event. A SQL function of one expression: inlined where it is used.
 */
export class Migration20261229000000_event_email_id extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE FUNCTION event_email_id(name text, data jsonb) RETURNS uuid LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT CASE WHEN (name LIKE 'email.%' OR name = 'contact.unsubscribed') AND data ->> 'emailId' ~ ${UUID_TEXT}
                    THEN (data ->> 'emailId')::uuid END
      $fn$;
      ${factsView('event_email_id(ev.name, ev.data)')}
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      ${factsView(`CASE WHEN (ev.name LIKE 'email.%' OR ev.name = 'contact.unsubscribed')
                   AND ev.data ->> 'emailId' ~ ${UUID_TEXT} THEN (ev.data ->> 'emailId')::uuid END`)}
      DROP FUNCTION event_email_id(text, jsonb);
    `);
  }
}
