import { Migration } from '@mikro-orm/migrations';

/**
 * The change feed's rows for events and new contacts are written once per statement (a transition
 * table) instead of once per row: a grouped track statement records dozens of events and creates
 * dozens of contacts, and one PL/pgSQL call with one INSERT … SELECT replaces one call per row. The
 * contacts update trigger stays row-level: its WHEN skips the updates the feed does not care about,
 * which a statement trigger could only do after copying every updated row into a transition table.
 */
export class Migration20261127041000_feed_statement_trigger extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE FUNCTION contact_changes_from_events() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO contact_changes (part, project_id, contact_id, kind, event_id, name)
        SELECT contact_changes_part(n.contact_id), n.project_id, n.contact_id, 'event', n.id, n.name
        FROM new_events n WHERE n.contact_id IS NOT NULL;
        RETURN NULL;
      END $fn$;
      DROP TRIGGER events_feed ON events;
      CREATE TRIGGER events_feed AFTER INSERT ON events
        REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION contact_changes_from_events();
      DROP FUNCTION contact_change_from_event();

      CREATE FUNCTION contact_changes_from_new_contacts() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO contact_changes (part, project_id, contact_id, kind)
        SELECT contact_changes_part(n.id), n.project_id, n.id, 'created' FROM new_contacts n;
        RETURN NULL;
      END $fn$;
      DROP TRIGGER contacts_feed_insert ON contacts;
      CREATE TRIGGER contacts_feed_insert AFTER INSERT ON contacts
        REFERENCING NEW TABLE AS new_contacts FOR EACH STATEMENT EXECUTE FUNCTION contact_changes_from_new_contacts();
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      DROP TRIGGER contacts_feed_insert ON contacts;
      CREATE TRIGGER contacts_feed_insert AFTER INSERT ON contacts
        FOR EACH ROW EXECUTE FUNCTION contact_change_from_contact();
      DROP FUNCTION contact_changes_from_new_contacts();
      CREATE FUNCTION contact_change_from_event() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO contact_changes (part, project_id, contact_id, kind, event_id, name)
        VALUES (contact_changes_part(NEW.contact_id), NEW.project_id, NEW.contact_id, 'event', NEW.id, NEW.name);
        RETURN NULL;
      END $fn$;
      DROP TRIGGER events_feed ON events;
      CREATE TRIGGER events_feed AFTER INSERT ON events
        FOR EACH ROW WHEN (NEW.contact_id IS NOT NULL) EXECUTE FUNCTION contact_change_from_event();
      DROP FUNCTION contact_changes_from_events();
    `);
  }
}
