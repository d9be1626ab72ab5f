import { Migration } from '@mikro-orm/migrations';

/** A digest of the first request's body, kept with its Idempotency-Key: a reuse with another body is a 422. */
export class Migration20261230010000_idempotency_request_hash extends Migration {
  override async up(): Promise<void> {
    this.addSql('ALTER TABLE idempotency_keys ADD COLUMN request_hash text;');
  }

  override async down(): Promise<void> {
    this.addSql('ALTER TABLE idempotency_keys DROP COLUMN request_hash;');
  }
}
