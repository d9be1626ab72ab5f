import { Migration } from '@mikro-orm/migrations';

/**
 * Inbound mail routes (which addresses of a verified domain a project takes mail for) and the
 * messages they took. A message's content (text, HTML, headers, the raw message its attachments
 * are read from) is emptied by the content retention; the row goes with the events' retention.
 */
export class Migration20270101000000_inbound_routes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE inbound_routes (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        domain text NOT NULL,
        pattern text NOT NULL,
        action text NOT NULL CHECK (action IN ('WEBHOOK', 'WORKFLOW', 'RECORD')),
        enabled boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT inbound_routes_project_address UNIQUE (project_id, domain, pattern)
      );
      CREATE INDEX inbound_routes_domain ON inbound_routes (domain) WHERE enabled;

      CREATE TABLE inbound_emails (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        route_id uuid REFERENCES inbound_routes (id) ON DELETE SET NULL,
        contact_id uuid REFERENCES contacts (id) ON DELETE SET NULL,
        message_id text,
        from_email text NOT NULL,
        from_name text,
        to_emails text[] NOT NULL,
        cc_emails text[] NOT NULL DEFAULT '{}',
        subject text NOT NULL DEFAULT '',
        text text,
        html text,
        headers jsonb NOT NULL DEFAULT '[]',
        auth jsonb NOT NULL,
        attachments jsonb NOT NULL DEFAULT '[]',
        raw bytea,
        reply_email_id uuid,
        reply_contact_id uuid,
        reply_by text,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX inbound_emails_project ON inbound_emails (project_id, id);
      CREATE INDEX inbound_emails_route ON inbound_emails (route_id, id);
    `);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE inbound_emails; DROP TABLE inbound_routes;');
  }
}
