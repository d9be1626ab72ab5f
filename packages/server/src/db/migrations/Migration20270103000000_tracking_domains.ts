import { Migration } from '@mikro-orm/migrations';

/**
 * Tracking domains: the host open and click links of a sender domain's mail use (a CNAME to
 * Pigeon's public host). One per sender domain; verified by one project at a time, as sender domains.
 */
export class Migration20270103000000_tracking_domains extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE tracking_domains (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        domain_id uuid NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
        domain text NOT NULL,
        verified_at timestamptz,
        last_checked_at timestamptz,
        record_status text NOT NULL DEFAULT 'unchecked',
        note text,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT tracking_domains_one_per_sender UNIQUE (domain_id),
        CONSTRAINT tracking_domains_project_domain UNIQUE (project_id, domain)
      );
      CREATE UNIQUE INDEX tracking_domains_verified_once ON tracking_domains (domain) WHERE verified_at IS NOT NULL;
    `);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE tracking_domains;');
  }
}
