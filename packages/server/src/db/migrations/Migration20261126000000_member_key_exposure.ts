import { Migration } from '@mikro-orm/migrations';

/**
 * `memberships.saw_secret_key`: whether the member could read the project's current secret key
 * (an OWNER or ADMIN since the last rotation). Removing such a member answers with a suggestion to
 * rotate. Until this migration every member was shown the secret key, so every existing member
 * starts as having seen it.
 */
export class Migration20261126000000_member_key_exposure extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      ALTER TABLE memberships ADD COLUMN saw_secret_key boolean NOT NULL DEFAULT false;
      UPDATE memberships SET saw_secret_key = true;
    `);
  }

  override async down(): Promise<void> {
    this.addSql('ALTER TABLE memberships DROP COLUMN saw_secret_key;');
  }
}
