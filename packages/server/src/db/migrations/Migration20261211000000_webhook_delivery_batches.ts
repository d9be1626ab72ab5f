import { Migration } from '@mikro-orm/migrations';

/**
 * Event webhook deliveries that cost PostgreSQL less per delivery (issue 27's burst target).
 *
 * - `status` is in no index any more: the due index covers every delivery with a next attempt time
 *   (PENDING, and SENDING under its claim), so a claim (status, claimed_at, attempts) touches no
 *   indexed column and is a HOT update (no index entry written) wherever its page has room. The
 *   SENDING index goes: the claim counts an endpoint's in-flight rows in the due index's window,
 *   and a claim past its timeout is claimable again there (no separate reclaim statement). The
 *   window is ordered by (next_attempt_at, id), both unchanged by a claim: a burst's rows share
 *   one next_attempt_at, and ordered by it alone (then by their place in the table, which a
 *   non-HOT claim changes) claimed rows left the window and a slow endpoint got every row claimed.
 *   table keeps the default fillfactor: at 70 half the claims of a 20,000 burst were HOT, at 50 all
 *   of them, yet PostgreSQL spent about as much CPU per delivery at 70 as at 100, and about three
 *   times more at 50 (emptier pages for the insert, the scans and the final update).
 * - Attempts live in the delivery row (`attempt_log`, newest first, the last 20 kept): recording
 *   an outcome is one update of the row it finishes, not an insert into a second table with its
 *   two indexes and a foreign-key check per attempt.
 * - The project foreign key goes: a delivery belongs to an endpoint (cascading from its project),
 *   so the check per queued row proved nothing the endpoint's did not.
 */
export class Migration20261211000000_webhook_delivery_batches extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      ALTER TABLE webhook_messages ADD COLUMN attempt_log jsonb NOT NULL DEFAULT '[]';
      UPDATE webhook_messages m SET attempt_log = a.log
      FROM (SELECT message_id, jsonb_agg(jsonb_build_object('at', at, 'trigger', trigger, 'status_code', status_code,
                     'duration_ms', duration_ms, 'response', response, 'error', error) ORDER BY at DESC) AS log
            FROM (SELECT *, row_number() OVER (PARTITION BY message_id ORDER BY at DESC) AS n FROM webhook_attempts) x
            WHERE n <= 20 GROUP BY message_id) a
      WHERE m.id = a.message_id;
      DROP TABLE webhook_attempts;
      DROP INDEX webhook_messages_due;
      DROP INDEX webhook_messages_sending;
      CREATE INDEX webhook_messages_due ON webhook_messages (endpoint_id, next_attempt_at, id) WHERE next_attempt_at IS NOT NULL;
      ALTER TABLE webhook_messages DROP CONSTRAINT IF EXISTS webhook_messages_project_id_fkey;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      ALTER TABLE webhook_messages ADD CONSTRAINT webhook_messages_project_id_fkey
        FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE;
      DROP INDEX webhook_messages_due;
      CREATE INDEX webhook_messages_due ON webhook_messages (endpoint_id, next_attempt_at) WHERE status = 'PENDING';
      CREATE INDEX webhook_messages_sending ON webhook_messages (endpoint_id, claimed_at) WHERE status = 'SENDING';
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
      INSERT INTO webhook_attempts (id, message_id, at, trigger, status_code, duration_ms, response, error)
      SELECT uuidv7_compat(), m.id, (a->>'at')::timestamptz, a->>'trigger', (a->>'status_code')::int,
             (a->>'duration_ms')::int, a->>'response', a->>'error'
      FROM webhook_messages m CROSS JOIN LATERAL jsonb_array_elements(m.attempt_log) AS a;
      ALTER TABLE webhook_messages DROP COLUMN attempt_log;
    `);
  }
}
