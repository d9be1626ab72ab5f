import { Migration } from '@mikro-orm/migrations';

/**
 * `events` and `emails` become range-partitioned on `id`, one partition a month. Ids are UUIDv7:
 * their first 48 bits are the creation time in milliseconds, so `uuidv7_floor(month start)` is
 * the lowest id of that month and an id range is a time range. `id` stays the primary key (the
 * partition key is in it) and a lookup by id touches one partition.
 *
 * This migration only swaps the schema (fast, in the migration's transaction): the old tables are
 * renamed `*_unpartitioned` and `moveUnpartitionedHistory` (db/partitions.ts, run right after the
 * migrations at every start and by `pigeon migrate`) moves their rows into the new tables in
 * bounded batches, each batch one `DELETE … RETURNING` feeding an `INSERT`: a batch commits whole
 * or not at all, so a run killed at any point and started again moves every row exactly once.
 *
 * - A DEFAULT partition takes any id no monthly partition covers (the partitions job fell behind,
 *   a clock far off): a write never fails for want of a partition. `history_partition_ensure`
 *   never moves rows out of it: a month whose partition is created late starts just after the
 *   last row the DEFAULT partition holds in that month (see ARCHITECTURE.md).
 * - `emails_campaign_contact` can no longer be unique (a unique index on a partitioned table must
 *   contain `id`); one email per campaign and contact is kept by the campaign's start, which
 *   freezes the audience once under the campaign's row lock.
 * - The foreign keys that point at `emails` (link clicks, suppressions) point at the new table,
 *   NOT VALID until the move is done; the move validates them.
 * - The change feed's trigger skips rows being moved (`pigeon.moving_history`): they were fed
 *   when first written.
 */
export class Migration20261213000000_partitioned_history extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE FUNCTION uuidv7_floor(ts timestamptz) RETURNS uuid LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT (lpad(to_hex(floor(extract(epoch FROM ts) * 1000)::bigint), 12, '0') || '00000000000000000000')::uuid
      $fn$;
      CREATE FUNCTION uuidv7_time(id uuid) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT to_timestamp(('x' || lpad(left(replace(id::text, '-', ''), 12), 16, '0'))::bit(64)::bigint / 1000.0)
      $fn$;

      -- Creates the month's partition of a history table unless it exists. Rows the DEFAULT
      -- partition already holds in that month stay there: the partition starts after the last one.
      CREATE FUNCTION history_partition_ensure(parent text, month date) RETURNS text LANGUAGE plpgsql AS $fn$
      DECLARE
        part text := parent || '_p' || to_char(month, 'YYYYMM');
        lo uuid := uuidv7_floor(date_trunc('month', month)::timestamp AT TIME ZONE 'UTC');
        hi uuid := uuidv7_floor((date_trunc('month', month) + interval '1 month')::timestamp AT TIME ZONE 'UTC');
        last_in_default uuid;
      BEGIN
        IF to_regclass(part) IS NOT NULL THEN RETURN NULL; END IF;
        EXECUTE format('LOCK TABLE %I IN SHARE MODE', parent || '_default');
        EXECUTE format('SELECT id FROM %I WHERE id >= %L AND id < %L ORDER BY id DESC LIMIT 1', parent || '_default', lo, hi)
          INTO last_in_default;
        IF last_in_default IS NOT NULL THEN
          lo := uuidv7_floor(uuidv7_time(last_in_default) + interval '1 millisecond');
          IF lo >= hi THEN RETURN NULL; END IF;
        END IF;
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', part, parent, lo, hi);
        RETURN part;
      END $fn$;

      CREATE OR REPLACE FUNCTION contact_changes_from_events() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF current_setting('pigeon.moving_history', true) = 'on' THEN RETURN NULL; END IF;
        INSERT INTO contact_changes (part, project_id, contact_id, kind, event_id, name)
        SELECT contact_changes_part(n.contact_id), n.project_id, n.contact_id, 'event', n.id, n.name
        FROM new_events n WHERE n.contact_id IS NOT NULL;
        RETURN NULL;
      END $fn$;

      DROP TRIGGER events_feed ON events;
      ALTER TABLE events RENAME TO events_unpartitioned;
      ALTER INDEX events_pkey RENAME TO events_unpartitioned_pkey;
      ALTER INDEX events_project_created RENAME TO events_unpartitioned_project_created;
      ALTER INDEX events_project_name RENAME TO events_unpartitioned_project_name;
      ALTER INDEX events_contact RENAME TO events_unpartitioned_contact;

      CREATE TABLE events (LIKE events_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
        PARTITION BY RANGE (id);
      ALTER TABLE events ADD PRIMARY KEY (id),
        ADD FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE,
        ADD FOREIGN KEY (contact_id) REFERENCES contacts (id) ON DELETE CASCADE;
      CREATE INDEX events_project_created ON events (project_id, created_at, id);
      CREATE INDEX events_project_name ON events (project_id, name, created_at);
      CREATE INDEX events_contact ON events (contact_id, created_at);
      CREATE TABLE events_default PARTITION OF events DEFAULT;
      CREATE TRIGGER events_feed AFTER INSERT ON events
        REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION contact_changes_from_events();

      ALTER TABLE emails RENAME TO emails_unpartitioned;
      ALTER INDEX emails_pkey RENAME TO emails_unpartitioned_pkey;
      ALTER INDEX emails_queue RENAME TO emails_unpartitioned_queue;
      ALTER INDEX emails_claimed RENAME TO emails_unpartitioned_claimed;
      ALTER INDEX emails_project_created RENAME TO emails_unpartitioned_project_created;
      ALTER INDEX emails_contact RENAME TO emails_unpartitioned_contact;
      ALTER INDEX emails_project_outbox RENAME TO emails_unpartitioned_project_outbox;
      ALTER INDEX emails_campaign_contact RENAME TO emails_unpartitioned_campaign_contact;
      ALTER INDEX emails_workflow_execution RENAME TO emails_unpartitioned_workflow_execution;
      ALTER INDEX emails_project_went_out RENAME TO emails_unpartitioned_project_went_out;
      ALTER INDEX emails_provider_message_id RENAME TO emails_unpartitioned_provider_message_id;
      ALTER INDEX emails_tags_idx RENAME TO emails_unpartitioned_tags_idx;

      CREATE TABLE emails (LIKE emails_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
        PARTITION BY RANGE (id);
      ALTER TABLE emails ADD PRIMARY KEY (id),
        ADD FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE,
        ADD FOREIGN KEY (contact_id) REFERENCES contacts (id) ON DELETE SET NULL,
        ADD FOREIGN KEY (template_id) REFERENCES templates (id) ON DELETE SET NULL,
        ADD FOREIGN KEY (campaign_id) REFERENCES campaigns (id) ON DELETE SET NULL,
        ADD FOREIGN KEY (workflow_execution_id) REFERENCES workflow_executions (id) ON DELETE SET NULL;
      CREATE INDEX emails_queue ON emails (priority, next_attempt_at) WHERE status = 'QUEUED';
      CREATE INDEX emails_claimed ON emails (claimed_at) WHERE status = 'SENDING';
      CREATE INDEX emails_project_created ON emails (project_id, created_at);
      CREATE INDEX emails_contact ON emails (contact_id);
      CREATE INDEX emails_project_outbox ON emails (project_id, sent_at DESC) WHERE outbox_file IS NOT NULL;
      CREATE INDEX emails_campaign_contact ON emails (campaign_id, contact_id) WHERE campaign_id IS NOT NULL;
      CREATE INDEX emails_workflow_execution ON emails (workflow_execution_id) WHERE workflow_execution_id IS NOT NULL;
      CREATE INDEX emails_project_went_out ON emails (project_id, created_at DESC)
        WHERE sent_at IS NOT NULL OR bounced_at IS NOT NULL;
      CREATE INDEX emails_provider_message_id ON emails (provider_message_id) WHERE provider_message_id IS NOT NULL;
      CREATE INDEX emails_tags_idx ON emails USING gin (tags jsonb_path_ops) WHERE tags IS NOT NULL;
      CREATE TABLE emails_default PARTITION OF emails DEFAULT;

      ALTER TABLE email_link_clicks DROP CONSTRAINT email_link_clicks_email_id_fkey,
        ADD CONSTRAINT email_link_clicks_email_id_fkey FOREIGN KEY (email_id) REFERENCES emails (id) ON DELETE CASCADE NOT VALID;
      ALTER TABLE suppressions DROP CONSTRAINT suppressions_email_id_fkey,
        ADD CONSTRAINT suppressions_email_id_fkey FOREIGN KEY (email_id) REFERENCES emails (id) ON DELETE SET NULL NOT VALID;

      -- Same definition, bound again to the new tables.
      CREATE OR REPLACE VIEW event_count_facts AS
      SELECT ev.id, ev.project_id, date_trunc('hour', ev.created_at, 'UTC') AS hour, ev.name,
             em.campaign_id, em.template_id, contact_changes_part(ev.contact_id) AS part
      FROM events ev
      LEFT JOIN LATERAL (
        SELECT e.campaign_id, e.template_id FROM emails e
        WHERE e.id = CASE WHEN (ev.name LIKE 'email.%' OR ev.name = 'contact.unsubscribed')
                           AND ev.data ->> 'emailId' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                          THEN (ev.data ->> 'emailId')::uuid END
          AND e.project_id = ev.project_id
        OFFSET 0
      ) em ON true
      WHERE ev.contact_id IS NOT NULL;

      -- A partition for every month the old rows span (at most ten years back) up to three ahead.
      DO $do$
      DECLARE
        first_month date;
        m date;
      BEGIN
        SELECT date_trunc('month', least(
          coalesce(uuidv7_time((SELECT id FROM events_unpartitioned ORDER BY id LIMIT 1)), now()),
          coalesce(uuidv7_time((SELECT id FROM emails_unpartitioned ORDER BY id LIMIT 1)), now())))::date INTO first_month;
        first_month := greatest(first_month, date_trunc('month', now() - interval '10 years')::date);
        FOR m IN SELECT generate_series(first_month, (now() + interval '3 months')::date, interval '1 month')::date LOOP
          PERFORM history_partition_ensure('events', m);
          PERFORM history_partition_ensure('emails', m);
        END LOOP;
      END $do$;
    `);
  }

  override async down(): Promise<void> {
    throw new Error('Partitioned history is not converted back; restore a backup taken before the upgrade instead.');
  }
}
