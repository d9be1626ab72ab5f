import { Migration } from '@mikro-orm/migrations';

/**
 * The analytics rollup keeps a row per feed part (`part` 0–7) so that the parts never wait for each
 * other; for an hour that is over, `analytics.fold-counts` folds them into one row with `part = -1`.
 * This index holds the rows still to fold: the recent hours only, once the job has caught up.
 */
export class Migration20261226010000_event_counts_fold extends Migration {
  override async up(): Promise<void> {
    this.addSql('CREATE INDEX event_counts_unfolded ON event_counts (hour) WHERE part >= 0;');
  }

  override async down(): Promise<void> {
    this.addSql('DROP INDEX IF EXISTS event_counts_unfolded;');
  }
}
