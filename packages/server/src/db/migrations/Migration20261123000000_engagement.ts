import { Migration } from '@mikro-orm/migrations';

/**
 * Engagement: per-project subscription-page settings, per-email burst windows for opens and
 * clicks, the outbox file of each delivered message, and per-link click counts.
 */
export class Migration20261123000000_engagement extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      ALTER TABLE projects
        ADD COLUMN subscribed_redirect_url text,
        ADD COLUMN unsubscribed_redirect_url text,
        ADD COLUMN unsubscribe_mailbox text;

      ALTER TABLE emails
        ADD COLUMN tracked boolean NOT NULL DEFAULT false,
        ADD COLUMN last_opened_at timestamptz,
        ADD COLUMN outbox_file text;
      CREATE INDEX emails_project_outbox ON emails (project_id, sent_at DESC) WHERE outbox_file IS NOT NULL;

      CREATE TABLE email_link_clicks (
        email_id uuid NOT NULL REFERENCES emails (id) ON DELETE CASCADE,
        link text NOT NULL,
        clicks integer NOT NULL DEFAULT 1,
        first_clicked_at timestamptz NOT NULL DEFAULT now(),
        last_clicked_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (email_id, link)
      );
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      DROP TABLE email_link_clicks;
      ALTER TABLE emails DROP COLUMN tracked, DROP COLUMN last_opened_at, DROP COLUMN outbox_file;
      ALTER TABLE projects DROP COLUMN subscribed_redirect_url, DROP COLUMN unsubscribed_redirect_url,
        DROP COLUMN unsubscribe_mailbox;
    `);
  }
}
