import { Migration } from '@mikro-orm/migrations';

/**
 * Single sign-on: an account may have no password (it signs in through a provider), the
 * provider identities linked to each account, and the sign-in attempts in flight (state, nonce
 * and PKCE verifier, single-use, for ten minutes).
 */
export class Migration20261204000000_sso extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      ALTER TABLE users ALTER COLUMN password_hash DROP NOT NULL;

      CREATE TABLE user_identities (
        provider text NOT NULL,
        subject text NOT NULL,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        email text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (provider, subject)
      );
      CREATE UNIQUE INDEX user_identities_user_provider ON user_identities (user_id, provider);

      CREATE TABLE sso_attempts (
        state_hash bytea PRIMARY KEY,
        provider text NOT NULL,
        code_verifier text NOT NULL,
        nonce text NOT NULL,
        next_path text NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      );
      CREATE INDEX sso_attempts_expires ON sso_attempts (expires_at);
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      DROP TABLE sso_attempts;
      DROP TABLE user_identities;
      DELETE FROM users WHERE password_hash IS NULL;
      ALTER TABLE users ALTER COLUMN password_hash SET NOT NULL;
    `);
  }
}
