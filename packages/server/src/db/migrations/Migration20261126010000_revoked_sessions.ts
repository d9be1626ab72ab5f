import { Migration } from '@mikro-orm/migrations';

/**
 * Sessions ended by logout: the session JWT's `jti`, kept until the JWT would have expired anyway,
 * so a copied cookie stops working when its owner signs out.
 */
export class Migration20261126010000_revoked_sessions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE revoked_sessions (
        jti uuid PRIMARY KEY,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX revoked_sessions_expires ON revoked_sessions (expires_at);
    `);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE revoked_sessions;');
  }
}
