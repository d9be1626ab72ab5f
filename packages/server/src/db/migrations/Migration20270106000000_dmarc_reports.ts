import { Migration } from '@mikro-orm/migrations';

/**
 * DMARC aggregate reports (RFC 7489 appendix C) received on the inbound receiver, per verified
 * sender domain: one `dmarc_reports` row per report and domain (a resent report, same reporter and
 * report id, is the same row), its records (one per source IP and result) in `dmarc_report_records`.
 */
export class Migration20270106000000_dmarc_reports extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE dmarc_reports (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        domain_id uuid NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
        org_name text NOT NULL,
        org_email text,
        report_id text NOT NULL,
        begin_at timestamptz NOT NULL,
        end_at timestamptz NOT NULL,
        policy jsonb NOT NULL,
        messages bigint NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT dmarc_reports_once UNIQUE (domain_id, org_name, report_id)
      );`);
    this.addSql('CREATE INDEX dmarc_reports_domain_time ON dmarc_reports (project_id, domain_id, begin_at);');
    this.addSql(`
      CREATE TABLE dmarc_report_records (
        report_id uuid NOT NULL REFERENCES dmarc_reports (id) ON DELETE CASCADE,
        n integer NOT NULL,
        source_ip inet NOT NULL,
        count bigint NOT NULL,
        disposition text NOT NULL,
        dkim text NOT NULL,
        spf text NOT NULL,
        header_from text NOT NULL,
        auth_results jsonb NOT NULL,
        PRIMARY KEY (report_id, n)
      );`);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE dmarc_report_records;');
    this.addSql('DROP TABLE dmarc_reports;');
  }
}
