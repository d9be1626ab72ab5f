import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook signing secrets (Standard Webhooks `whsec_…`), one per project. After a rotation the
 * previous one keeps signing too (a second signature) for 24 hours from `webhook_secret_rotated_at`.
 * Stored in clear like the API keys: an HMAC needs the key itself.
 */
export class Migration20261125010000_webhook_secrets extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      ALTER TABLE projects
        ADD COLUMN webhook_secret text,
        ADD COLUMN webhook_secret_previous text,
        ADD COLUMN webhook_secret_rotated_at timestamptz;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(
      'ALTER TABLE projects DROP COLUMN webhook_secret, DROP COLUMN webhook_secret_previous, DROP COLUMN webhook_secret_rotated_at;',
    );
  }
}
