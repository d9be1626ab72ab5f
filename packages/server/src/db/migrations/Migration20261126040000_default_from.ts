import { Migration } from '@mikro-orm/migrations';

/** A project's default sender for `/v1/send` requests that name none (clients written for Plunk). */
export class Migration20261126040000_default_from extends Migration {
  override async up(): Promise<void> {
    this.addSql('ALTER TABLE projects ADD COLUMN default_from text;');
  }

  override async down(): Promise<void> {
    this.addSql('ALTER TABLE projects DROP COLUMN default_from;');
  }
}
