import { Migration } from '@mikro-orm/migrations';

/**
 * `/v1/send` options: copies (`cc`, shown in the header, and `bcc`, envelope only) as arrays of
 * `{ email, name }`, and the sender's `tags` (a few short key/values), found again by containment.
 */
export class Migration20261206010000_send_options extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      ALTER TABLE emails ADD COLUMN cc jsonb, ADD COLUMN bcc jsonb, ADD COLUMN tags jsonb;
      CREATE INDEX emails_tags_idx ON emails USING gin (tags jsonb_path_ops) WHERE tags IS NOT NULL;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      DROP INDEX IF EXISTS emails_tags_idx;
      ALTER TABLE emails DROP COLUMN cc, DROP COLUMN bcc, DROP COLUMN tags;
    `);
  }
}
