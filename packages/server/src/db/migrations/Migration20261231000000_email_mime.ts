import { Migration } from '@mikro-orm/migrations';

/**
 * A message its sender built (SMTP submission): the MIME as it goes out, per email (tracking
 * rewrites its HTML per recipient). NULL for mail Pigeon composes (`/v1/send`'s JSON, campaigns).
 */
export class Migration20261231000000_email_mime extends Migration {
  override async up(): Promise<void> {
    this.addSql('ALTER TABLE emails ADD COLUMN mime bytea;');
  }

  override async down(): Promise<void> {
    this.addSql('ALTER TABLE emails DROP COLUMN mime;');
  }
}
