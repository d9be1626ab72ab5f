import { Migration } from '@mikro-orm/migrations';

/** Users, projects with their two API keys, memberships, invitations and single-use auth tokens. */
export class Migration20261122010000_accounts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE users (
        id uuid PRIMARY KEY,
        email text NOT NULL UNIQUE,
        password_hash text NOT NULL,
        email_verified boolean NOT NULL DEFAULT false,
        session_version integer NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE projects (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        public_key text NOT NULL,
        secret_key text NOT NULL,
        public_key_hash bytea NOT NULL UNIQUE,
        secret_key_hash bytea NOT NULL UNIQUE,
        disabled boolean NOT NULL DEFAULT false,
        disabled_reason text,
        tracking_mode text NOT NULL DEFAULT 'ENABLED' CHECK (tracking_mode IN ('ENABLED', 'DISABLED', 'MARKETING_ONLY')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE project_suspensions (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        reason text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX project_suspensions_project ON project_suspensions (project_id, created_at DESC);

      CREATE TABLE memberships (
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        role text NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'MEMBER')),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, user_id)
      );
      CREATE INDEX memberships_user ON memberships (user_id);

      CREATE TABLE invitations (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        email text NOT NULL,
        role text NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'MEMBER')),
        token_hash bytea NOT NULL UNIQUE,
        invited_by uuid REFERENCES users (id) ON DELETE SET NULL,
        expires_at timestamptz NOT NULL,
        accepted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX invitations_pending ON invitations (project_id, email) WHERE accepted_at IS NULL;

      CREATE TABLE auth_tokens (
        token_hash bytea PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        purpose text NOT NULL CHECK (purpose IN ('VERIFY_EMAIL', 'RESET_PASSWORD')),
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX auth_tokens_user ON auth_tokens (user_id);

      CREATE TABLE login_failures (
        key text PRIMARY KEY,
        failures integer NOT NULL,
        window_started_at timestamptz NOT NULL,
        locked_until timestamptz
      );
    `);
  }

  override async down(): Promise<void> {
    this.addSql(
      'DROP TABLE login_failures, auth_tokens, invitations, memberships, project_suspensions, projects, users;',
    );
  }
}
