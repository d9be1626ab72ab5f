import { Migration } from '@mikro-orm/migrations';

/**
 * The deliverability feedback loop: addresses a project no longer sends to (hard bounces and
 * complaints), the campaign pause of a project whose bounce or complaint rate crossed a threshold,
 * and a partial index for the rolling health window (the project's last messages that went out).
 */
export class Migration20261127010000_deliverability extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE suppressions (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        email text NOT NULL,
        reason text NOT NULL CHECK (reason IN ('hard_bounce', 'complaint')),
        detail text,
        email_id uuid REFERENCES emails (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT suppressions_project_email UNIQUE (project_id, email)
      );
      CREATE INDEX suppressions_project_id ON suppressions (project_id, id DESC);

      ALTER TABLE projects
        ADD COLUMN campaigns_paused_at timestamptz,
        ADD COLUMN campaigns_paused_reason text;

      CREATE INDEX emails_project_went_out ON emails (project_id, created_at DESC)
        WHERE sent_at IS NOT NULL OR bounced_at IS NOT NULL;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      DROP INDEX emails_project_went_out;
      ALTER TABLE projects DROP COLUMN campaigns_paused_at, DROP COLUMN campaigns_paused_reason;
      DROP TABLE suppressions;
    `);
  }
}
