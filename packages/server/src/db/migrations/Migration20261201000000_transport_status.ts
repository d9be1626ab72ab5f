import { Migration } from '@mikro-orm/migrations';

/**
 * Relay outages cost no mail (DESIGN.md §9). `transport_status` is the shared view of each mail
 * transport's circuit breaker (one row per transport kind; no row or `down_since` null: up), written
 * by the delivery workers on a state change only and read by `/health` and the security endpoint.
 * `emails.requeued_at` restarts a message's lifetime when its FAILED message is queued again.
 */
export class Migration20261201000000_transport_status extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE transport_status (
        transport text PRIMARY KEY,
        down_since timestamptz,
        last_error text,
        next_probe_at timestamptz,
        owners_notified_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      ALTER TABLE emails ADD COLUMN requeued_at timestamptz;
    `);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE transport_status; ALTER TABLE emails DROP COLUMN requeued_at;');
  }
}
