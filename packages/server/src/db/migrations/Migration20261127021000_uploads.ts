import { Migration } from '@mikro-orm/migrations';

/**
 * Uploaded images: one row per distinct image (by SHA-256) per project; `size` sums to the
 * project's storage use. The bytes live in the configured store under `storage_key`.
 */
export class Migration20261127021000_uploads extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE uploads (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        storage_key text NOT NULL,
        content_type text NOT NULL,
        size bigint NOT NULL CHECK (size > 0),
        sha256 text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX uploads_project_sha256 ON uploads (project_id, sha256);
    `);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE uploads;');
  }
}
