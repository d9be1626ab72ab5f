import { Migration } from '@mikro-orm/migrations';

/**
 * A sending server that lost Pigeon's 250 sends the message again: its Message-ID, per route, makes
 * the retry a no-op (as SMTP submission's Message-ID does for a submission).
 */
export class Migration20270101000100_inbound_email_retries extends Migration {
  override async up(): Promise<void> {
    this.addSql('CREATE UNIQUE INDEX inbound_emails_route_message ON inbound_emails (route_id, message_id);');
  }

  override async down(): Promise<void> {
    this.addSql('DROP INDEX inbound_emails_route_message;');
  }
}
