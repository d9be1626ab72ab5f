import { Migration } from '@mikro-orm/migrations';

/**
 * Topics (what a project's mail is about: a newsletter, product news) and each contact's explicit
 * choice per topic. A contact without a row for a topic has the topic's default (OPT_IN:
 * subscribed, OPT_OUT: not). A campaign names at most one topic; a deleted topic leaves the
 * campaigns that already went out without one (deleting one still used is refused by the service).
 */
export class Migration20270102000000_topics extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE topics (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        default_subscription text NOT NULL CHECK (default_subscription IN ('OPT_IN', 'OPT_OUT')),
        visibility text NOT NULL CHECK (visibility IN ('PUBLIC', 'HIDDEN')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX topics_project_name ON topics (project_id, lower(name));

      CREATE TABLE contact_topics (
        topic_id uuid NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
        contact_id uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
        project_id uuid NOT NULL,
        subscribed boolean NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (topic_id, contact_id)
      );
      CREATE INDEX contact_topics_contact ON contact_topics (contact_id);

      ALTER TABLE campaigns ADD COLUMN topic_id uuid REFERENCES topics (id) ON DELETE SET NULL;

      -- The reference index answers "409: still in use" for topics too.
      ALTER TABLE resource_refs DROP CONSTRAINT resource_refs_ref_type_check;
      ALTER TABLE resource_refs ADD CONSTRAINT resource_refs_ref_type_check
        CHECK (ref_type IN ('field', 'event', 'segment', 'template', 'topic'));
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      DELETE FROM resource_refs WHERE ref_type = 'topic';
      ALTER TABLE resource_refs DROP CONSTRAINT resource_refs_ref_type_check;
      ALTER TABLE resource_refs ADD CONSTRAINT resource_refs_ref_type_check
        CHECK (ref_type IN ('field', 'event', 'segment', 'template'));
      ALTER TABLE campaigns DROP COLUMN topic_id; DROP TABLE contact_topics; DROP TABLE topics;
    `);
  }
}
