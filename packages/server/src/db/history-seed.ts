import type pg from 'pg';
import { raw, runStatement, sql } from './query.js';

/**
 * Fills a project with history spread over the last `days` days: `emails` rows (half of them
 * with a link click, every hundredth named by a suppression) and `events` for its contacts, with
 * UUIDv7 ids of their own time. Used by the conversion test and the `history` benchmarks; one
 * INSERT … SELECT per table, so a million events take seconds.
 */
export async function seedHistory(
  pool: pg.Pool,
  opts: { projectId: string; contacts: number; emails: number; events: number; days: number },
): Promise<void> {
  const db = await pool.connect(); // one session: the contacts' numbering is a temporary table
  try {
    await seed(db, opts);
  } finally {
    db.release();
  }
}

async function seed(
  db: pg.PoolClient,
  opts: { projectId: string; contacts: number; emails: number; events: number; days: number },
): Promise<void> {
  const { projectId, contacts, emails, events, days } = opts;
  // An id of a given time: its 48-bit millisecond prefix, version 7, random tail.
  const idAt = (ts: string) =>
    `(lpad(to_hex(floor(extract(epoch FROM ${ts}) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text), 1, 19))::uuid`;
  await runStatement(
    db,
    sql`INSERT INTO contacts (id, project_id, email, subscribed)
        SELECT uuidv7_compat(), ${projectId}::uuid, 'history-' || g || '@example.com', true
        FROM generate_series(1, ${contacts}::int) g`,
  );
  await runStatement(
    db,
    sql`CREATE TEMP TABLE seed_contacts AS
        SELECT row_number() OVER () AS n, id FROM contacts WHERE project_id = ${projectId}::uuid`,
  );
  const emailTime = `now() - (g::float8 / ${emails} * ${days}) * interval '1 day'`;
  await runStatement(
    db,
    sql`INSERT INTO emails (id, project_id, contact_id, content_type, status, from_email, to_email, subject, html, text,
          headers, message_id, sent_at, created_at)
        SELECT ${raw(`${idAt(emailTime)}, `)}${projectId}::uuid, c.id, 'TRANSACTIONAL',
          'DELIVERED', 'news@example.com', 'history-' || c.n || '@example.com', 'Subject ' || g,
          '<p>Hello ' || g || '</p>', 'Hello ' || g, '{"X-Seed": "1"}', '<seed-' || g || '@example.com>',
          ${raw(`${emailTime}, ${emailTime}`)}
        FROM generate_series(1, ${emails}::int) g JOIN seed_contacts c ON c.n = 1 + g % ${contacts}::int`,
  );
  await runStatement(
    db,
    sql`INSERT INTO email_link_clicks (email_id, link)
        SELECT id, 'https://example.com/' || left(id::text, 8) FROM emails
        WHERE project_id = ${projectId}::uuid AND get_byte(uuid_send(id), 15) % 2 = 0`,
  );
  await runStatement(
    db,
    sql`INSERT INTO suppressions (id, project_id, email, reason, email_id)
        SELECT uuidv7_compat(), project_id, to_email, 'hard_bounce', min(id::text)::uuid FROM emails
        WHERE project_id = ${projectId}::uuid AND get_byte(uuid_send(id), 15) % 100 = 0
        GROUP BY project_id, to_email ON CONFLICT DO NOTHING`,
  );
  const eventTime = `now() - (g::float8 / ${events} * ${days}) * interval '1 day'`;
  await runStatement(
    db,
    sql`INSERT INTO events (id, project_id, contact_id, name, data, created_at)
        SELECT ${raw(`${idAt(eventTime)}, `)}${projectId}::uuid, c.id,
          (ARRAY['page.viewed', 'email.opened', 'order.placed'])[1 + g % 3], jsonb_build_object('n', g),
          ${raw(eventTime)}
        FROM generate_series(1, ${events}::int) g JOIN seed_contacts c ON c.n = 1 + g % ${contacts}::int`,
  );
  await runStatement(db, sql`DROP TABLE seed_contacts`);
}
