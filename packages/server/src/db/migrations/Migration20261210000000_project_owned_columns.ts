import { Migration } from '@mikro-orm/migrations';

/**
 * One owner per table (issue 25): the `projects` columns other modules wrote move to tables of the
 * modules that own them, so the Project entity maps every column of `projects`.
 * - `project_webhook_secrets` (webhooks): the signing secret, the previous one and when it rotated;
 * - `campaign_pauses` (deliverability): a project whose campaigns are paused, since when and why.
 * Both keep one row per project and go with it.
 */
export class Migration20261210000000_project_owned_columns extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE project_webhook_secrets (
        project_id uuid PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
        secret text NOT NULL,
        previous text,
        rotated_at timestamptz NOT NULL DEFAULT now()
      );
      INSERT INTO project_webhook_secrets (project_id, secret, previous, rotated_at)
        SELECT id, webhook_secret, webhook_secret_previous, COALESCE(webhook_secret_rotated_at, now())
        FROM projects WHERE webhook_secret IS NOT NULL;

      CREATE TABLE campaign_pauses (
        project_id uuid PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
        paused_at timestamptz NOT NULL DEFAULT now(),
        reason text NOT NULL
      );
      INSERT INTO campaign_pauses (project_id, paused_at, reason)
        SELECT id, campaigns_paused_at, COALESCE(campaigns_paused_reason, '')
        FROM projects WHERE campaigns_paused_at IS NOT NULL;

      ALTER TABLE projects
        DROP COLUMN webhook_secret, DROP COLUMN webhook_secret_previous, DROP COLUMN webhook_secret_rotated_at,
        DROP COLUMN campaigns_paused_at, DROP COLUMN campaigns_paused_reason;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      ALTER TABLE projects
        ADD COLUMN webhook_secret text, ADD COLUMN webhook_secret_previous text,
        ADD COLUMN webhook_secret_rotated_at timestamptz,
        ADD COLUMN campaigns_paused_at timestamptz, ADD COLUMN campaigns_paused_reason text;
      UPDATE projects p SET webhook_secret = w.secret, webhook_secret_previous = w.previous,
        webhook_secret_rotated_at = w.rotated_at
        FROM project_webhook_secrets w WHERE w.project_id = p.id;
      UPDATE projects p SET campaigns_paused_at = c.paused_at, campaigns_paused_reason = c.reason
        FROM campaign_pauses c WHERE c.project_id = p.id;
      DROP TABLE project_webhook_secrets;
      DROP TABLE campaign_pauses;
    `);
  }
}
