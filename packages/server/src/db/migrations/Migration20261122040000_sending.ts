import { Migration } from '@mikro-orm/migrations';

/** Sender domains with their DKIM keys, templates, and the email records that are the delivery queue. */
export class Migration20261122040000_sending extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE domains (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        domain text NOT NULL,
        dkim_selector text NOT NULL,
        dkim_private_key text NOT NULL,
        dkim_public_key text NOT NULL,
        verified_at timestamptz,
        last_checked_at timestamptz,
        record_status jsonb NOT NULL DEFAULT '{}',
        note text,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT domains_project_domain UNIQUE (project_id, domain)
      );
      -- A domain can be verified by one project at a time.
      CREATE UNIQUE INDEX domains_verified_once ON domains (domain) WHERE verified_at IS NOT NULL;

      CREATE TABLE templates (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        subject text NOT NULL,
        body text NOT NULL,
        from_email text NOT NULL,
        from_name text,
        reply_to text,
        type text NOT NULL CHECK (type IN ('TRANSACTIONAL', 'MARKETING', 'HEADLESS')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX templates_project_created ON templates (project_id, created_at);

      CREATE TABLE emails (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        contact_id uuid REFERENCES contacts (id) ON DELETE SET NULL,
        template_id uuid REFERENCES templates (id) ON DELETE SET NULL,
        source text NOT NULL DEFAULT 'TRANSACTIONAL',
        content_type text NOT NULL,
        status text NOT NULL DEFAULT 'QUEUED'
          CHECK (status IN ('QUEUED', 'SENDING', 'SENT', 'DELIVERED', 'BOUNCED', 'COMPLAINED', 'FAILED')),
        priority smallint NOT NULL DEFAULT 0,
        from_email text NOT NULL,
        from_name text,
        reply_to text,
        to_email text NOT NULL,
        to_name text,
        subject text NOT NULL,
        html text NOT NULL,
        text text NOT NULL,
        headers jsonb NOT NULL DEFAULT '{}',
        attachments jsonb NOT NULL DEFAULT '[]',
        message_id text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        claimed_at timestamptz,
        last_error text,
        sent_at timestamptz,
        delivered_at timestamptz,
        bounced_at timestamptz,
        complained_at timestamptz,
        opened_at timestamptz,
        clicked_at timestamptz,
        opens integer NOT NULL DEFAULT 0,
        clicks integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX emails_queue ON emails (priority, next_attempt_at) WHERE status = 'QUEUED';
      CREATE INDEX emails_claimed ON emails (claimed_at) WHERE status = 'SENDING';
      CREATE INDEX emails_project_created ON emails (project_id, created_at);
      CREATE INDEX emails_contact ON emails (contact_id);
    `);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE emails, templates, domains;');
  }
}
