import type { Queryable } from '../../db/sql.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { notFound } from '../../http/errors.js';
import { findUsages, groupUsages } from '../references/index.js';

interface EventRow {
  id: string;
  name: string;
  contact_id: string | null;
  contact_email: string | null;
  data: Record<string, unknown>;
  created_at: Date;
  sort_value: string;
}

const toEventDto = (r: EventRow) => ({
  id: r.id,
  name: r.name,
  contactId: r.contact_id,
  contactEmail: r.contact_email,
  data: r.data,
  createdAt: r.created_at.toISOString(),
});

export interface EventFilter {
  limit: number;
  cursor?: string;
  name?: string;
  from?: string;
  to?: string;
  contactId?: string;
  /** Any of these names, and with `custom` also every name Pigeon does not emit itself. */
  names?: { exact: string[]; custom: boolean };
  /** Only events about emails sent with all these tags (`/v1/send`'s `tags`). */
  emailTags?: Record<string, string>;
}

/** SQL true for names Pigeon emits (see reserved.ts); indexes cannot help here, the other filters do. */
export const EMITTED_EVENT_NAME = `(e.name LIKE 'email.%' OR e.name IN ('contact.subscribed', 'contact.unsubscribed')
  OR e.name ~ '^segment\\.[^.]+\\.(entry|exit)$')`;

/** The WHERE conditions and their values for a filter, numbered from $1 = project id. */
function eventConditions(projectId: string, f: Omit<EventFilter, 'limit' | 'cursor'>) {
  const values: unknown[] = [projectId];
  const conditions = ['e.project_id = $1'];
  const add = (sql: string, value: unknown) => {
    values.push(value);
    conditions.push(sql.replaceAll('?', `$${values.length}`));
  };
  if (f.name) add('e.name = ?', f.name);
  if (f.from) add('e.created_at >= ?::timestamptz', f.from);
  if (f.to) add('e.created_at < ?::timestamptz', f.to);
  if (f.contactId) add('e.contact_id = ?::uuid', f.contactId);
  // Uncorrelated: the tagged emails' ids are found once (GIN index on tags), then matched.
  if (f.emailTags) {
    add(
      "e.data ->> 'emailId' = ANY(ARRAY(SELECT t.id::text FROM emails t WHERE t.project_id = $1 AND t.tags @> ?::jsonb))",
      JSON.stringify(f.emailTags),
    );
  }
  if (f.names) add(`(e.name = ANY(?::text[])${f.names.custom ? ` OR NOT ${EMITTED_EVENT_NAME}` : ''})`, f.names.exact);
  return { conditions, values };
}

/** Newest first, keyset-paginated over (created_at, id); `total` on the first page only. */
export async function listEvents(db: Queryable, projectId: string, f: EventFilter) {
  const { conditions: where, values } = eventConditions(projectId, f);
  if (f.cursor) {
    const cursor = decodeCursor(f.cursor);
    values.push(cursor.v, cursor.id);
    where.push(`(e.created_at, e.id) < ($${values.length - 1}::timestamptz, $${values.length}::uuid)`);
  }
  values.push(f.limit + 1);
  const { rows } = await db.query<EventRow>(
    `SELECT e.*, e.created_at::text AS sort_value, c.email AS contact_email
     FROM events e LEFT JOIN contacts c ON c.id = e.contact_id
     WHERE ${where.join(' AND ')} ORDER BY e.created_at DESC, e.id DESC LIMIT $${values.length}`,
    values,
  );
  const page = rows.slice(0, f.limit);
  const last = page.at(-1);
  const hasMore = rows.length > f.limit;
  const total = f.cursor ? 0 : await countEvents(db, projectId, f);
  return {
    data: page.map(toEventDto),
    cursor: hasMore && last ? encodeCursor({ v: last.sort_value, id: last.id }) : null,
    hasMore,
    total,
  };
}

/** How many events match a filter. */
export async function countEvents(db: Queryable, projectId: string, f: Omit<EventFilter, 'limit' | 'cursor'>) {
  const { conditions, values } = eventConditions(projectId, f);
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM events e WHERE ${conditions.join(' AND ')}`,
    values,
  );
  return rows[0]?.n ?? 0;
}

export async function listContactEvents(db: Queryable, projectId: string, contactId: string, f: EventFilter) {
  const { rows } = await db.query('SELECT 1 FROM contacts WHERE project_id = $1 AND id = $2', [projectId, contactId]);
  if (rows.length === 0) throw notFound('Contact');
  return listEvents(db, projectId, { ...f, contactId });
}

const DAY_MS = 24 * 3600_000;

export async function eventStats(db: Queryable, projectId: string, range: { from?: string; to?: string }) {
  const to = range.to ? new Date(range.to) : new Date();
  const from = range.from ? new Date(range.from) : new Date(to.getTime() - 30 * DAY_MS);
  const params = [projectId, from, to];
  const { rows: byName } = await db.query<{ name: string; count: number }>(
    `SELECT name, count(*)::int AS count FROM events WHERE project_id = $1 AND created_at >= $2 AND created_at < $3
     GROUP BY name ORDER BY count DESC, name`,
    params,
  );
  const { rows: byDay } = await db.query<{ day: string; count: number }>(
    `SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, count(*)::int AS count
     FROM events WHERE project_id = $1 AND created_at >= $2 AND created_at < $3 GROUP BY 1 ORDER BY 1`,
    params,
  );
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    total: byName.reduce((sum, r) => sum + r.count, 0),
    byName,
    byDay,
  };
}

export async function eventNames(db: Queryable, projectId: string) {
  const { rows } = await db.query<{ name: string; count: number; last_seen: Date }>(
    `SELECT name, count(*)::int AS count, max(created_at) AS last_seen FROM events WHERE project_id = $1
     GROUP BY name ORDER BY max(created_at) DESC`,
    [projectId],
  );
  return rows.map((r) => ({ name: r.name, count: r.count, lastSeen: r.last_seen.toISOString() }));
}

/** Workflows, segments and campaigns do not exist in this build yet: each adds its lookup here. */
/** Segments (and, as they arrive, campaigns and workflows) whose conditions name the event. */
export async function eventUsage(db: Queryable, projectId: string, name: string) {
  const { segments, campaigns, workflows } = groupUsages(await findUsages(db, projectId, { type: 'event', key: name }));
  return { name, workflows, segments, campaigns };
}
