import { idsSince } from '../../db/partitions.js';
import { and, queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { notFound } from '../../http/errors.js';
import { findUsages, groupUsages } from '../references/service.js';

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

/** The WHERE condition of a filter, as one builder fragment. */
function eventConditions(projectId: string, f: Omit<EventFilter, 'limit' | 'cursor'>): Sql {
  const conditions = [sql`e.project_id = ${projectId}`];
  if (f.name) conditions.push(sql`e.name = ${f.name}`);
  if (f.from) conditions.push(sql`e.created_at >= ${f.from}::timestamptz`, idsSince(raw('e.id'), f.from));
  if (f.to) conditions.push(sql`e.created_at < ${f.to}::timestamptz`);
  if (f.contactId) conditions.push(sql`e.contact_id = ${f.contactId}::uuid`);
  // Uncorrelated: the tagged emails' ids are found once (GIN index on tags), then matched.
  if (f.emailTags) {
    conditions.push(
      sql`e.data ->> 'emailId' = ANY(ARRAY(SELECT t.id::text FROM emails t
            WHERE t.project_id = ${projectId} AND t.tags @> ${JSON.stringify(f.emailTags)}::jsonb))`,
    );
  }
  if (f.names) {
    const custom = f.names.custom ? sql` OR NOT ${raw(EMITTED_EVENT_NAME)}` : raw('');
    conditions.push(sql`(e.name = ANY(${f.names.exact}::text[])${custom})`);
  }
  return and(conditions);
}

/** Newest first, keyset-paginated over (created_at, id); `total` on the first page only. */
export async function listEvents(db: Queryable, projectId: string, f: EventFilter) {
  const conditions = [eventConditions(projectId, f)];
  if (f.cursor) {
    const cursor = decodeCursor(f.cursor);
    conditions.push(sql`(e.created_at, e.id) < (${cursor.v}::timestamptz, ${cursor.id}::uuid)`);
  }
  const rows = await queryRows<EventRow>(
    db,
    sql`SELECT e.*, e.created_at::text AS sort_value, c.email AS contact_email
        FROM events e LEFT JOIN contacts c ON c.id = e.contact_id
        WHERE ${and(conditions)} ORDER BY e.created_at DESC, e.id DESC LIMIT ${f.limit + 1}`,
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
  const rows = await queryRows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM events e WHERE ${eventConditions(projectId, f)}`,
  );
  return rows[0]?.n ?? 0;
}

export async function listContactEvents(db: Queryable, projectId: string, contactId: string, f: EventFilter) {
  const found = await queryRows(db, sql`SELECT 1 FROM contacts WHERE project_id = ${projectId} AND id = ${contactId}`);
  if (found.length === 0) throw notFound('Contact');
  return listEvents(db, projectId, { ...f, contactId });
}

const DAY_MS = 24 * 3600_000;

export async function eventStats(db: Queryable, projectId: string, range: { from?: string; to?: string }) {
  const to = range.to ? new Date(range.to) : new Date();
  const from = range.from ? new Date(range.from) : new Date(to.getTime() - 30 * DAY_MS);
  const inRange = sql`project_id = ${projectId} AND created_at >= ${from} AND created_at < ${to} AND ${idsSince(raw('id'), from)}`;
  const byName = await queryRows<{ name: string; count: number }>(
    db,
    sql`SELECT name, count(*)::int AS count FROM events WHERE ${inRange} GROUP BY name ORDER BY count DESC, name`,
  );
  const byDay = await queryRows<{ day: string; count: number }>(
    db,
    sql`SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, count(*)::int AS count
        FROM events WHERE ${inRange} GROUP BY 1 ORDER BY 1`,
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
  const rows = await queryRows<{ name: string; count: number; last_seen: Date }>(
    db,
    sql`SELECT name, count(*)::int AS count, max(created_at) AS last_seen FROM events WHERE project_id = ${projectId}
        GROUP BY name ORDER BY max(created_at) DESC`,
  );
  return rows.map((r) => ({ name: r.name, count: r.count, lastSeen: r.last_seen.toISOString() }));
}

/** Workflows, segments and campaigns do not exist in this build yet: each adds its lookup here. */
/** Segments (and, as they arrive, campaigns and workflows) whose conditions name the event. */
export async function eventUsage(db: Queryable, projectId: string, name: string) {
  const { segments, campaigns, workflows } = groupUsages(await findUsages(db, projectId, { type: 'event', key: name }));
  return { name, workflows, segments, campaigns };
}
