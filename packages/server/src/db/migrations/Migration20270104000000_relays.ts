import { Migration } from '@mikro-orm/migrations';

/**
 * Several relays (issue 64, item 3): the relay that accepted each email (NULL until one did, and
 * for mail sent before), and a project's own route per stream (NULL: the installation's route).
 */
export class Migration20270104000000_relays extends Migration {
  override async up(): Promise<void> {
    this.addSql('ALTER TABLE emails ADD COLUMN relay text;');
    this.addSql(
      'ALTER TABLE projects ADD COLUMN relay_route_transactional text[], ADD COLUMN relay_route_campaign text[];',
    );
  }

  override async down(): Promise<void> {
    this.addSql('ALTER TABLE projects DROP COLUMN relay_route_transactional, DROP COLUMN relay_route_campaign;');
    this.addSql('ALTER TABLE emails DROP COLUMN relay;');
  }
}
