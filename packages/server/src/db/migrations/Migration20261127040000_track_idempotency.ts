import { Migration } from '@mikro-orm/migrations';

/**
 * A track's Idempotency-Key is claimed inside the track statement itself, with the id of the event
 * it recorded: the claim and the event commit together, and the 409 for a retry rebuilds the first
 * response (`details.originalResponse`) from that event.
 */
export class Migration20261127040000_track_idempotency extends Migration {
  override async up(): Promise<void> {
    this.addSql('ALTER TABLE idempotency_keys ADD COLUMN event_id uuid;');
  }

  override async down(): Promise<void> {
    this.addSql('ALTER TABLE idempotency_keys DROP COLUMN event_id;');
  }
}
