import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotency-Key claims without a foreign key to `projects`. The SDK claims a key with every track,
 * and the foreign key cost one check (a query and a row lock) per claimed key: ~4–6 µs of the
 * database per keyed track. Deleting a project now deletes its keys itself (`deleteProject`), and
 * a claim takes the project's row lock once per statement (`FOR KEY SHARE`), so a claim racing the
 * deletion either commits first and is deleted with the project, or sees no project and claims nothing.
 */
export class Migration20261228000000_idempotency_keys_unreferenced extends Migration {
  override async up(): Promise<void> {
    this.addSql('ALTER TABLE idempotency_keys DROP CONSTRAINT IF EXISTS idempotency_keys_project_id_fkey;');
  }

  override async down(): Promise<void> {
    this.addSql(`
      DELETE FROM idempotency_keys k WHERE NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = k.project_id);
      ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_project_id_fkey
        FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE;
    `);
  }
}
