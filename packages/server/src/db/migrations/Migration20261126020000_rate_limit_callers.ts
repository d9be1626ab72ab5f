import { Migration } from '@mikro-orm/migrations';

/**
 * Rate-limit counters per kind of caller: API keys (0) and dashboard sessions (1) each have the
 * project's budget, so a dashboard user is not locked out by the project's own API traffic. The
 * counters are UNLOGGED minute counts: recreated empty.
 */
export class Migration20261126020000_rate_limit_callers extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      DROP TABLE rate_limit_counters;
      CREATE UNLOGGED TABLE rate_limit_counters (
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        caller smallint NOT NULL,
        window_start bigint NOT NULL,
        shard smallint NOT NULL,
        hits integer NOT NULL,
        PRIMARY KEY (project_id, caller, window_start, shard)
      ) WITH (fillfactor = 50);
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      DROP TABLE rate_limit_counters;
      CREATE UNLOGGED TABLE rate_limit_counters (
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        window_start bigint NOT NULL,
        shard smallint NOT NULL,
        hits integer NOT NULL,
        PRIMARY KEY (project_id, window_start, shard)
      ) WITH (fillfactor = 50);
    `);
  }
}
