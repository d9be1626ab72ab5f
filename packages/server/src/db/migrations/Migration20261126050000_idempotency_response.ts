import { Migration } from '@mikro-orm/migrations';

/**
 * The body of a 2xx first response, kept with its Idempotency-Key claim for the key's lifetime, so
 * the 409 for a retry can carry it (`details.originalResponse`) and a client can return it.
 */
export class Migration20261126050000_idempotency_response extends Migration {
  override async up(): Promise<void> {
    this.addSql('ALTER TABLE idempotency_keys ADD COLUMN response jsonb;');
  }

  override async down(): Promise<void> {
    this.addSql('ALTER TABLE idempotency_keys DROP COLUMN response;');
  }
}
