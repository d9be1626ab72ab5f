import { Migration } from '@mikro-orm/migrations';

/** Contacts, the events recorded on them, and the project-scoped background jobs (imports, bulk). */
export class Migration20261122020000_contacts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      -- Time-ordered UUIDs for rows written set-wise in SQL (PostgreSQL 18 has uuidv7(); 15-17 do not).
      CREATE FUNCTION uuidv7_compat() RETURNS uuid LANGUAGE sql VOLATILE AS $fn$
        SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) PLACING
          substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6),
          52, 1), 53, 1), 'hex')::uuid
      $fn$;

      CREATE TABLE contacts (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        email text NOT NULL,
        subscribed boolean NOT NULL,
        data jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT contacts_project_email UNIQUE (project_id, email)
      );
      CREATE INDEX contacts_project_created ON contacts (project_id, created_at, id);
      CREATE INDEX contacts_email_trgm ON contacts USING gin (email gin_trgm_ops);
      CREATE INDEX contacts_data ON contacts USING gin (data jsonb_path_ops);

      CREATE TABLE events (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        contact_id uuid REFERENCES contacts (id) ON DELETE CASCADE,
        name text NOT NULL,
        data jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX events_project_created ON events (project_id, created_at, id);
      CREATE INDEX events_project_name ON events (project_id, name, created_at);
      CREATE INDEX events_contact ON events (contact_id, created_at);

      CREATE TABLE background_jobs (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        kind text NOT NULL,
        status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed')),
        input jsonb NOT NULL DEFAULT '{}',
        file bytea,
        total integer NOT NULL DEFAULT 0,
        processed integer NOT NULL DEFAULT 0,
        created integer NOT NULL DEFAULT 0,
        updated integer NOT NULL DEFAULT 0,
        skipped integer NOT NULL DEFAULT 0,
        errors jsonb NOT NULL DEFAULT '[]',
        error text,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz
      );
      CREATE INDEX background_jobs_project ON background_jobs (project_id, created_at);
    `);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE background_jobs, events, contacts; DROP FUNCTION uuidv7_compat();');
  }
}
