import { Migration } from '@mikro-orm/migrations';

/** Idempotency-Key claims and per-project rate-limit windows, shared by every process. */
export class Migration20261122030000_tracking extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE idempotency_keys (
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        key text NOT NULL,
        request text NOT NULL,
        status_code integer,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (project_id, key)
      );
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

      CREATE TABLE rate_limit_counters (
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        window_start bigint NOT NULL,
        hits integer NOT NULL,
        PRIMARY KEY (project_id, window_start)
      ) WITH (fillfactor = 50);
    `);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE rate_limit_counters, idempotency_keys;');
  }
}
