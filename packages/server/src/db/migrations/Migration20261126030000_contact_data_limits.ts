import { Migration } from '@mikro-orm/migrations';

/**
 * A contact's stored data: at most 200 top-level keys of at most 100 characters, and 64 KB as
 * JSON text. Checked on every write, whoever the writer (track, send, the contacts API, imports,
 * workflows); `NOT VALID` leaves rows written before the limit as they are until they change.
 * The request schema applies the same limits per request; this bounds what many requests add up to.
 */
export class Migration20261126030000_contact_data_limits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE FUNCTION pigeon_contact_data_ok(d jsonb) RETURNS boolean
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
          SELECT jsonb_typeof(d) <> 'object' OR (
            octet_length(d::text) <= 65536
            AND (SELECT count(*) <= 200 AND coalesce(max(length(k)), 0) <= 100 FROM jsonb_object_keys(d) AS k))
        $$;
      ALTER TABLE contacts ADD CONSTRAINT contacts_data_limits CHECK (pigeon_contact_data_ok(data)) NOT VALID;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      ALTER TABLE contacts DROP CONSTRAINT contacts_data_limits;
      DROP FUNCTION pigeon_contact_data_ok(jsonb);
    `);
  }
}
