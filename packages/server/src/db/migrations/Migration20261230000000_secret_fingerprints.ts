import { Migration } from '@mikro-orm/migrations';

/**
 * One fingerprint per shared secret (an HMAC of a fixed label under the secret, never the secret),
 * recorded by the first process that starts against the database: every later process compares
 * its own and refuses to start on a difference (`modules/system/secret-fingerprints.ts`).
 */
export class Migration20261230000000_secret_fingerprints extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE secret_fingerprints (
        name text PRIMARY KEY,
        fingerprint text NOT NULL,
        recorded_by text NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now()
      );
    `);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE secret_fingerprints;');
  }
}
