import { Migration } from '@mikro-orm/migrations';

/**
 * The marketing engine's shared parts: segments and their members, the reference index, the
 * contact change feed (filled by triggers, so every writer of events and contacts feeds it),
 * and the ISO date parser the condition compiler shares with the in-memory evaluator.
 */
export class Migration20261123100000_segments extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE segments (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        type text NOT NULL CHECK (type IN ('DYNAMIC', 'STATIC')),
        condition jsonb,
        track_membership boolean NOT NULL DEFAULT false,
        slug text NOT NULL,
        member_count integer NOT NULL DEFAULT 0,
        member_count_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT segments_project_slug UNIQUE (project_id, slug),
        CONSTRAINT segments_condition_by_type CHECK ((type = 'DYNAMIC') = (condition IS NOT NULL))
      );
      CREATE INDEX segments_project_created ON segments (project_id, created_at DESC, id DESC);

      CREATE TABLE segment_members (
        segment_id uuid NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
        contact_id uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
        project_id uuid NOT NULL,
        entered_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (segment_id, contact_id)
      );
      CREATE INDEX segment_members_contact ON segment_members (contact_id);
      CREATE INDEX segment_members_page ON segment_members (segment_id, entered_at DESC, contact_id DESC);

      -- Member counts of STATIC and tracked segments follow their rows exactly, whoever writes
      -- them (the cascade when a contact is deleted included). Sharded by backend like
      -- contact_counts, so concurrent writers (real-time batches) never wait on one row and
      -- never deadlock; a count is the sum of at most 16 rows.
      CREATE TABLE segment_member_counts (
        segment_id uuid NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
        shard smallint NOT NULL,
        n bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (segment_id, shard)
      );
      CREATE FUNCTION segment_member_counts() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        -- Joined with segments: rows deleted by the cascade of a segment's own deletion count nowhere.
        IF TG_OP = 'INSERT' THEN
          INSERT INTO segment_member_counts AS m (segment_id, shard, n)
          SELECT r.segment_id, pg_backend_pid() % 16, count(*) FROM new_rows r JOIN segments s ON s.id = r.segment_id
          GROUP BY 1 ORDER BY 1
          ON CONFLICT (segment_id, shard) DO UPDATE SET n = m.n + EXCLUDED.n;
        ELSE
          INSERT INTO segment_member_counts AS m (segment_id, shard, n)
          SELECT r.segment_id, pg_backend_pid() % 16, -count(*) FROM old_rows r JOIN segments s ON s.id = r.segment_id
          GROUP BY 1 ORDER BY 1
          ON CONFLICT (segment_id, shard) DO UPDATE SET n = m.n + EXCLUDED.n;
        END IF;
        RETURN NULL;
      END $fn$;
      CREATE TRIGGER segment_members_count_insert AFTER INSERT ON segment_members
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION segment_member_counts();
      CREATE TRIGGER segment_members_count_delete AFTER DELETE ON segment_members
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION segment_member_counts();

      -- One row per "this owner references that field / event / segment / template".
      CREATE TABLE resource_refs (
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        owner_type text NOT NULL,
        owner_id uuid NOT NULL,
        ref_type text NOT NULL CHECK (ref_type IN ('field', 'event', 'segment', 'template')),
        ref_key text NOT NULL,
        PRIMARY KEY (owner_type, owner_id, ref_type, ref_key)
      );
      CREATE INDEX resource_refs_target ON resource_refs (project_id, ref_type, ref_key);
      -- Existing templates: the data fields their placeholders read (as dataFieldsUsed() does).
      INSERT INTO resource_refs (project_id, owner_type, owner_id, ref_type, ref_key)
      SELECT DISTINCT t.project_id, 'template', t.id, 'field', 'data.' || regexp_replace(m[1], '^data\\.', '')
      FROM templates t,
           regexp_matches(t.subject || ' ' || t.body, '\\{\\{\\s*([A-Za-z_$][\\w$-]*(?:\\.[\\w$-]+)*)', 'g') AS m
      WHERE m[1] LIKE 'data.%'
         OR split_part(m[1], '.', 1) NOT IN ('email', 'id', 'contact', 'data', 'unsubscribeUrl', 'subscribeUrl',
                                             'manageUrl', 'pigeon_id', 'pigeon_email')
      ON CONFLICT DO NOTHING;

      -- The change feed. Ordered by (txid, seq); a reader only reads rows whose transaction is
      -- older than its snapshot's xmin, so a row that commits late can never fall behind a cursor.
      CREATE TABLE contact_changes (
        part smallint NOT NULL,
        txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
        seq bigint GENERATED ALWAYS AS IDENTITY,
        project_id uuid NOT NULL,
        contact_id uuid NOT NULL,
        kind text NOT NULL,
        event_id uuid,
        name text,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (part, txid, seq)
      );

      CREATE TABLE change_feed_cursors (
        consumer text NOT NULL,
        part smallint NOT NULL,
        txid xid8 NOT NULL,
        seq bigint NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (consumer, part)
      );

      CREATE FUNCTION contact_changes_part(contact uuid) RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT (get_byte(uuid_send(contact), 15) % 8)::smallint
      $fn$;

      -- Row-level with WHEN: a contact update that changes nothing the feed cares about (the
      -- updated_at of every track) never enters PL/pgSQL, and no transition table is kept.
      CREATE FUNCTION contact_change_from_event() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO contact_changes (part, project_id, contact_id, kind, event_id, name)
        VALUES (contact_changes_part(NEW.contact_id), NEW.project_id, NEW.contact_id, 'event', NEW.id, NEW.name);
        RETURN NULL;
      END $fn$;

      CREATE FUNCTION contact_change_from_contact() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO contact_changes (part, project_id, contact_id, kind)
        VALUES (contact_changes_part(NEW.id), NEW.project_id, NEW.id, CASE TG_OP WHEN 'INSERT' THEN 'created' ELSE 'updated' END);
        RETURN NULL;
      END $fn$;

      CREATE TRIGGER events_feed AFTER INSERT ON events
        FOR EACH ROW WHEN (NEW.contact_id IS NOT NULL) EXECUTE FUNCTION contact_change_from_event();
      CREATE TRIGGER contacts_feed_insert AFTER INSERT ON contacts
        FOR EACH ROW EXECUTE FUNCTION contact_change_from_contact();
      CREATE TRIGGER contacts_feed_update AFTER UPDATE ON contacts
        FOR EACH ROW WHEN (NEW.data IS DISTINCT FROM OLD.data OR NEW.subscribed IS DISTINCT FROM OLD.subscribed
                           OR NEW.email IS DISTINCT FROM OLD.email)
        EXECUTE FUNCTION contact_change_from_contact();

      -- ISO 8601 text (date, or date-time with optional seconds, milliseconds and offset; no offset
      -- means UTC) to timestamptz; NULL for anything else, never an error. Mirrors parseIsoDate().
      CREATE FUNCTION pigeon_iso_ts(value jsonb) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT CASE WHEN jsonb_typeof(value) = 'string' THEN
          CASE WHEN (value #>> '{}') ~ '^[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,3})?)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])?)?$' THEN
            CASE WHEN substr(value #>> '{}', 9, 2)::int <= extract(day FROM
                   make_date(substr(value #>> '{}', 1, 4)::int, substr(value #>> '{}', 6, 2)::int, 1) + interval '1 month - 1 day')
            THEN (CASE
                    WHEN length(value #>> '{}') = 10 THEN (value #>> '{}') || 'T00:00:00Z'
                    WHEN (value #>> '{}') ~ '(Z|[+-][0-9]{2}:[0-9]{2})$' THEN value #>> '{}'
                    ELSE (value #>> '{}') || 'Z' END)::timestamptz
            END
          END
        END
      $fn$;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      DROP TRIGGER events_feed ON events;
      DROP TRIGGER contacts_feed_insert ON contacts;
      DROP TRIGGER contacts_feed_update ON contacts;
      DROP TRIGGER segment_members_count_insert ON segment_members;
      DROP TRIGGER segment_members_count_delete ON segment_members;
      DROP FUNCTION segment_member_counts(), contact_change_from_event(), contact_change_from_contact(),
        contact_changes_part(uuid), pigeon_iso_ts(jsonb);
      DROP TABLE change_feed_cursors, contact_changes, resource_refs, segment_member_counts, segment_members, segments;
    `);
  }
}
