import { Migration } from '@mikro-orm/migrations';

/** Extensions later migrations rely on: trigram search on emails and names. */
export class Migration20261122000000_extensions extends Migration {
  override async up(): Promise<void> {
    this.addSql('CREATE EXTENSION IF NOT EXISTS pg_trgm;');
  }

  override async down(): Promise<void> {
    this.addSql('DROP EXTENSION IF EXISTS pg_trgm;');
  }
}
