import { Migration } from '@mikro-orm/migrations';

/**
 * Exact contact totals per project without counting a million rows on every first page:
 * statement-level triggers add each statement's net change to one of 16 rows per project
 * (picked by backend pid, so concurrent writers rarely wait on the same row); a total is the
 * sum of at most 16 rows.
 */
export class Migration20261122050000_contact_counts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE contact_counts (
        project_id uuid NOT NULL,
        shard smallint NOT NULL,
        total bigint NOT NULL DEFAULT 0,
        subscribed bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (project_id, shard)
      );

      CREATE FUNCTION contact_counts_add(p uuid, d_total bigint, d_subscribed bigint) RETURNS void LANGUAGE sql AS $fn$
        INSERT INTO contact_counts AS cc (project_id, shard, total, subscribed)
        VALUES (p, pg_backend_pid() % 16, d_total, d_subscribed)
        ON CONFLICT (project_id, shard) DO UPDATE
          SET total = cc.total + EXCLUDED.total, subscribed = cc.subscribed + EXCLUDED.subscribed
      $fn$;

      CREATE FUNCTION contact_counts_on_insert() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM contact_counts_add(project_id, count(*), count(*) FILTER (WHERE subscribed))
        FROM new_rows GROUP BY project_id;
        RETURN NULL;
      END $fn$;

      CREATE FUNCTION contact_counts_on_delete() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM contact_counts_add(project_id, -count(*), -count(*) FILTER (WHERE subscribed))
        FROM old_rows GROUP BY project_id;
        RETURN NULL;
      END $fn$;

      CREATE FUNCTION contact_counts_on_update() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM contact_counts_add(n.project_id, 0, sum(n.subscribed::int - o.subscribed::int))
        FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE n.subscribed IS DISTINCT FROM o.subscribed
        GROUP BY n.project_id;
        RETURN NULL;
      END $fn$;

      CREATE TRIGGER contacts_count_insert AFTER INSERT ON contacts
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_counts_on_insert();
      CREATE TRIGGER contacts_count_delete AFTER DELETE ON contacts
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_counts_on_delete();
      CREATE TRIGGER contacts_count_update AFTER UPDATE ON contacts
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_counts_on_update();

      INSERT INTO contact_counts (project_id, shard, total, subscribed)
      SELECT project_id, 0, count(*), count(*) FILTER (WHERE subscribed) FROM contacts GROUP BY project_id;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      DROP TRIGGER contacts_count_insert ON contacts;
      DROP TRIGGER contacts_count_delete ON contacts;
      DROP TRIGGER contacts_count_update ON contacts;
      DROP FUNCTION contact_counts_on_insert(), contact_counts_on_delete(), contact_counts_on_update(), contact_counts_add(uuid, bigint, bigint);
      DROP TABLE contact_counts;
    `);
  }
}
