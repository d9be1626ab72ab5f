import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { lowestIdAt } from '../src/db/ids.js';
import { queryRows, runStatement, sql } from '../src/db/query.js';

/** A UUIDv7 made at `ms` (random below the time), for rows dated in a chosen month. */
export function idAt(ms: number): string {
  const random = randomBytes(8).toString('hex');
  return `${lowestIdAt(ms).slice(0, 13)}-7${random.slice(0, 3)}-8${random.slice(3, 6)}-${random.slice(4, 16)}`;
}

/** The start of the month `months` before this one (UTC), in ms; negative months lie ahead. */
export function monthStart(months: number): number {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - months, 1);
}

/** Makes the month's partition of `emails` (as the partitions job would) unless it exists. */
export async function ensureEmailsPartition(pool: pg.Pool, monthMs: number): Promise<void> {
  await queryRows(pool, sql`SELECT history_partition_ensure('emails', ${new Date(monthMs)}::date)`);
}

/**
 * An email row written as it stands after sending, with its id chosen (so its month, its partition):
 * what `POST /v1/send` cannot make, a message from months ago. Created and due a day ago.
 */
export async function insertEmailRow(
  pool: pg.Pool,
  row: { id: string; projectId: string; status: string; from?: string; to?: string },
): Promise<void> {
  const { id, projectId, status, from = 'app@window.example', to = 'someone@window.example' } = row;
  await runStatement(
    pool,
    sql`INSERT INTO emails (id, project_id, content_type, message_id, to_email, from_email, subject, html, text, status,
                            created_at, next_attempt_at)
        VALUES (${id}::uuid, ${projectId}::uuid, 'TRANSACTIONAL', ${`<${id}@window.example>`}, ${to}, ${from},
                'Hi', '<p>Hi</p>', 'Hi', ${status}, now() - interval '1 day', now() - interval '1 day')`,
  );
}

/** Sets an email's status directly (the test plays the part of a worker or of time). */
export async function setEmailStatus(pool: pg.Pool, id: string, status: string): Promise<void> {
  await runStatement(pool, sql`UPDATE emails SET status = ${status} WHERE id = ${id}::uuid`);
}

/** The email's status now. */
export async function emailStatus(pool: pg.Pool, id: string): Promise<string | undefined> {
  const [row] = await queryRows<{ status: string }>(pool, sql`SELECT status FROM emails WHERE id = ${id}::uuid`);
  return row?.status;
}

/** `count` emails of the project as they stand after sending, made now, in one statement (a long history's rows). */
export async function insertSentEmails(pool: pg.Pool, projectId: string, count: number): Promise<void> {
  await runStatement(
    pool,
    sql`INSERT INTO emails (id, project_id, content_type, message_id, to_email, from_email, subject, html, text, status)
        SELECT uuidv7_compat(), ${projectId}::uuid, 'TRANSACTIONAL', '<bulk' || g || '@rows.example>', 'r' || g || '@rows.example',
               'app@rows.example', 'Hi', '<p>Hi</p>', 'Hi', 'SENT'
        FROM generate_series(1, ${count}::int) g`,
  );
}
