import { Migration } from '@mikro-orm/migrations';

/**
 * Daily totals of the analytics rollup per project, UTC day and event name, for the stats of whole
 * days (`/events/stats`, `/activity/stats`, `/activity/types`: 30 rows a name instead of 720 hours ×
 * campaigns × templates). It holds exactly the folded hours (`event_counts` rows with `part = -1`):
 * the fold adds to it in the statement that folds, so a reader adds the rows not folded yet from
 * `event_counts` and counts every event once. The backfill runs with `event_counts` locked against
 * writes (the fold and the feed consumer wait for the migration's commit).
 */
export class Migration20261227000000_event_counts_daily extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE event_counts_daily (
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        day date NOT NULL,
        name text NOT NULL,
        count bigint NOT NULL,
        PRIMARY KEY (project_id, day, name)
      );
      LOCK TABLE event_counts IN SHARE ROW EXCLUSIVE MODE;
      INSERT INTO event_counts_daily (project_id, day, name, count)
      SELECT project_id, (hour AT TIME ZONE 'UTC')::date, name, sum(count)
      FROM event_counts WHERE part = -1 GROUP BY 1, 2, 3;
    `);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE IF EXISTS event_counts_daily;');
  }
}
