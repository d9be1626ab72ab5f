import { Migration } from '@mikro-orm/migrations';

/**
 * Campaigns. A campaign's recipients are `emails` rows (campaign_id set, one per contact, unique)
 * whose content is rendered by the delivery worker from the campaign, so no per-recipient HTML is
 * stored. Cancelled recipients get status CANCELLED. Projects may throttle campaign sending.
 */
export class Migration20261123200000_campaigns extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE campaigns (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        subject text NOT NULL,
        body text NOT NULL,
        from_email text NOT NULL,
        from_name text,
        reply_to text,
        type text NOT NULL CHECK (type IN ('TRANSACTIONAL', 'MARKETING', 'HEADLESS')),
        template_id uuid REFERENCES templates (id) ON DELETE SET NULL,
        status text NOT NULL DEFAULT 'DRAFT' CHECK (status IN ('DRAFT', 'SCHEDULED', 'SENDING', 'SENT', 'CANCELLED')),
        audience_type text NOT NULL CHECK (audience_type IN ('ALL', 'SEGMENT', 'FILTERED')),
        segment_id uuid,
        audience_condition jsonb,
        scheduled_for timestamptz,
        total_recipients integer NOT NULL DEFAULT 0,
        started_at timestamptz,
        sent_at timestamptz,
        cancelled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX campaigns_project_created ON campaigns (project_id, created_at DESC, id DESC);
      CREATE INDEX campaigns_due ON campaigns (scheduled_for) WHERE status = 'SCHEDULED';
      CREATE INDEX campaigns_sending ON campaigns (started_at) WHERE status = 'SENDING';

      ALTER TABLE emails ADD COLUMN campaign_id uuid REFERENCES campaigns (id) ON DELETE SET NULL;
      ALTER TABLE emails DROP CONSTRAINT emails_status_check;
      ALTER TABLE emails ADD CONSTRAINT emails_status_check
        CHECK (status IN ('QUEUED', 'SENDING', 'SENT', 'DELIVERED', 'BOUNCED', 'COMPLAINED', 'FAILED', 'CANCELLED'));
      CREATE UNIQUE INDEX emails_campaign_contact ON emails (campaign_id, contact_id) WHERE campaign_id IS NOT NULL;

      ALTER TABLE projects ADD COLUMN campaign_send_rate real;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      ALTER TABLE projects DROP COLUMN campaign_send_rate;
      DROP INDEX emails_campaign_contact;
      ALTER TABLE emails DROP COLUMN campaign_id;
      DROP TABLE campaigns;
    `);
  }
}
