import { Migration } from '@mikro-orm/migrations';

/**
 * Per-project retention (DESIGN.md §9): raw events 400 days, a sent message's content (HTML,
 * text, headers, attachments) 30 days, the email rows (metadata) 400 days. `retention_progress`
 * remembers up to which email id a project's content is already cleared, so each run of the
 * retention job only reads the emails that aged since the last one.
 */
export class Migration20261213000100_retention extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      ALTER TABLE projects
        ADD COLUMN retention_events_days integer NOT NULL DEFAULT 400,
        ADD COLUMN retention_content_days integer NOT NULL DEFAULT 30,
        ADD COLUMN retention_emails_days integer NOT NULL DEFAULT 400;
      CREATE TABLE retention_progress (
        project_id uuid PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
        content_cleared_before uuid NOT NULL
      );
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      DROP TABLE retention_progress;
      ALTER TABLE projects DROP COLUMN retention_events_days, DROP COLUMN retention_content_days,
        DROP COLUMN retention_emails_days;
    `);
  }
}
