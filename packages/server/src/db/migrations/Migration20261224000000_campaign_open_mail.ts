import { Migration } from '@mikro-orm/migrations';

/**
 * `emails_campaign_contact` (campaign_id, contact_id) became (campaign_id, status): nothing looks
 * an email up by campaign and contact since the partitioned table lost that unique constraint, and
 * every campaign read asks by status (the dispatcher's "no mail left queued or sending", cancel,
 * requeue, stats). Status changes are never HOT updates (the queue's partial indexes name status),
 * so the column costs no extra index writes. The dispatcher's completion check read a campaign's
 * every email through the old index (20 ms a tick at 20,000 recipients); now it probes two keys.
 */
export class Migration20261224000000_campaign_open_mail extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      DROP INDEX IF EXISTS emails_campaign_contact;
      CREATE INDEX emails_campaign_status ON emails (campaign_id, status) WHERE campaign_id IS NOT NULL;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      DROP INDEX IF EXISTS emails_campaign_status;
      CREATE INDEX emails_campaign_contact ON emails (campaign_id, contact_id) WHERE campaign_id IS NOT NULL;
    `);
  }
}
