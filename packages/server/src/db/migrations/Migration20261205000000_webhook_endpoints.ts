import { Migration } from '@mikro-orm/migrations';

/**
 * Outbound event webhooks (issue 27) and scheduled sends.
 *
 * - `webhook_endpoints`: per project, each with its own `whsec_` secret (and the previous one
 *   while a rotation's overlap lasts), its event-type filters and its failure state.
 * - `webhook_messages`: one row per (event, endpoint), written by the change-feed consumer in the
 *   feed's transaction (so nothing is lost: the cursor moves with them). `webhook_id` is the
 *   Standard Webhooks `webhook-id`, the same for every attempt; `payload` is the JSON body.
 * - `webhook_attempts`: every HTTP attempt (scheduled or replayed) with its answer.
 * - `emails.send_at`: a scheduled send's due time; the row's `next_attempt_at` is its timer.
 */
export class Migration20261205000000_webhook_endpoints extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE webhook_endpoints (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        url text NOT NULL,
        description text,
        event_types text[] NOT NULL,
        enabled boolean NOT NULL DEFAULT true,
        disabled_reason text,
        secret text NOT NULL,
        previous_secret text,
        previous_secret_expires_at timestamptz,
        failing_since timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX webhook_endpoints_project ON webhook_endpoints (project_id, created_at, id);

      CREATE TABLE webhook_messages (
        id uuid PRIMARY KEY,
        webhook_id text NOT NULL,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        event_id uuid,
        event_type text NOT NULL,
        payload jsonb NOT NULL,
        status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'SENDING', 'SUCCEEDED', 'FAILED')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        claimed_at timestamptz,
        replay boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL
      );
      CREATE UNIQUE INDEX webhook_messages_event ON webhook_messages (endpoint_id, event_id) WHERE event_id IS NOT NULL;
      CREATE INDEX webhook_messages_due ON webhook_messages (endpoint_id, next_attempt_at) WHERE status = 'PENDING';
      CREATE INDEX webhook_messages_sending ON webhook_messages (endpoint_id, claimed_at) WHERE status = 'SENDING';
      CREATE INDEX webhook_messages_endpoint ON webhook_messages (endpoint_id, created_at DESC, id DESC);

      CREATE TABLE webhook_attempts (
        id uuid PRIMARY KEY,
        message_id uuid NOT NULL REFERENCES webhook_messages (id) ON DELETE CASCADE,
        at timestamptz NOT NULL,
        trigger text NOT NULL CHECK (trigger IN ('SCHEDULED', 'REPLAY')),
        status_code integer,
        duration_ms integer NOT NULL,
        response text,
        error text
      );
      CREATE INDEX webhook_attempts_message ON webhook_attempts (message_id, at DESC);

      ALTER TABLE emails ADD COLUMN send_at timestamptz;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(
      'ALTER TABLE emails DROP COLUMN send_at; DROP TABLE webhook_attempts, webhook_messages, webhook_endpoints;',
    );
  }
}
