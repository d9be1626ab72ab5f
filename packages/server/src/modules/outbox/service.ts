import { readFile } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { decodeCursor, encodeCursor } from '../../kit/cursor.js';

const PAGE_SIZE = 50;

interface OutboxRow {
  id: string;
  project_name: string;
  from_email: string;
  from_name: string | null;
  to_email: string;
  subject: string;
  html: string;
  outbox_file: string;
  sent_at: Date;
  sort_value: string;
}

const toMessage = (r: OutboxRow) => ({
  id: r.id,
  projectName: r.project_name,
  from: r.from_name ? `${r.from_name} <${r.from_email}>` : r.from_email,
  to: r.to_email,
  subject: r.subject,
  html: r.html,
  file: r.outbox_file,
  sentAt: r.sent_at.toISOString(),
});

/** The delivered outbox messages of the projects `userId` is a member of, matching `where`. */
const selectMessages = (userId: string, where: Sql) => sql`
  SELECT e.id, p.name AS project_name, e.from_email, e.from_name, e.to_email, e.subject, e.html, e.outbox_file,
         e.sent_at, e.sent_at::text AS sort_value
  FROM emails e
  JOIN memberships m ON m.project_id = e.project_id AND m.user_id = ${userId}
  JOIN projects p ON p.id = e.project_id
  WHERE e.outbox_file IS NOT NULL AND ${where}`;

/** Delivered outbox messages of every project the user is a member of, newest first, keyset-paginated. */
export async function listOutboxMessages(db: Queryable, userId: string, before: string | undefined) {
  const cursor = before ? decodeCursor(before) : undefined;
  const where = cursor ? sql`(e.sent_at, e.id) < (${cursor.v}::timestamptz, ${cursor.id}::uuid)` : raw('true');
  const rows = await queryRows<OutboxRow>(
    db,
    sql`${selectMessages(userId, where)} ORDER BY e.sent_at DESC, e.id DESC LIMIT ${PAGE_SIZE + 1}`,
  );
  const page = rows.slice(0, PAGE_SIZE);
  const last = page.at(-1);
  return {
    messages: page.map(toMessage),
    next: rows.length > PAGE_SIZE && last ? encodeCursor({ v: last.sort_value, id: last.id }) : null,
  };
}

export async function findOutboxMessage(db: Queryable, userId: string, emailId: string) {
  const rows = await queryRows<OutboxRow>(db, selectMessages(userId, sql`e.id = ${emailId}`));
  return rows[0] ? toMessage(rows[0]) : undefined;
}

export type OutboxMessage = ReturnType<typeof toMessage>;

type OutboxDeps = Pick<AppDeps, 'config'>;

/** The delivered .eml of a message; never a file outside the outbox directory. */
export async function readOutboxFile(deps: OutboxDeps, message: OutboxMessage): Promise<Buffer> {
  const path = resolve(message.file);
  if (relative(deps.config.mail.outboxDir, path).startsWith('..'))
    throw new Error('outbox file outside the outbox directory');
  return readFile(path);
}

/** The header block of the delivered .eml, one header per line as it was sent (folding kept). */
export async function readOutboxHeaders(deps: OutboxDeps, message: OutboxMessage): Promise<string> {
  // Loaded on first use: mailparser (with its decoders) is ~10 MB of RSS the API process otherwise never needs.
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(await readOutboxFile(deps, message), {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
  });
  return parsed.headerLines.map((h) => h.line).join('\n');
}

/**
 * The HTML as sent, without the open pixel: viewing a message here must not count as an open. The
 * pixel is on PUBLIC_URL or on the sender's tracking domain, so it is found by its path, on any host.
 */
export function htmlWithoutOpenPixel(message: Pick<OutboxMessage, 'html'>): string {
  return message.html.replace(/<img src="https?:\/\/[^"]+\/t\/o\/[^"/]+\.gif"[^>]*>/g, '');
}
