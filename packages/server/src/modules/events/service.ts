import { countUpToCap, LATER_PAGE } from '../../db/capped-count.js';
import { idsSince } from '../../db/partitions.js';
import { and, queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { decodeCursor, encodeCursor } from '../../kit/cursor.js';
import { notFound } from '../../kit/errors.js';
import { findUsages, groupUsages } from '../references/public.js';

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
export const EMITTED_EVENT_NAME = `(e.name LIKE 'email.%' OR e.name IN ('contact.subscribed', 'contact.unsubscribed',
  'contact.topic.subscribed', 'contact.topic.unsubscribed')
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

/**
 * Newest first, keyset-paginated over (created_at, id); `total` on the first page only, counted
 * up to `EVENTS_TOTAL_CAP` (ARCHITECTURE.md "History reads"). The page and the count run side by
 * side when `db` is a pool.
 */
export async function listEvents(db: Queryable, projectId: string, f: EventFilter) {
  const conditions = [eventConditions(projectId, f)];
  if (f.cursor) {
    const cursor = decodeCursor(f.cursor);
    conditions.push(sql`(e.created_at, e.id) < (${cursor.v}::timestamptz, ${cursor.id}::uuid)`);
  }
  const read = (extra: Sql[] = []) =>
    queryRows<EventRow>(
      db,
      sql`SELECT e.*, e.created_at::text AS sort_value, c.email AS contact_email
          FROM events e LEFT JOIN contacts c ON c.id = e.contact_id
          WHERE ${and([...conditions, ...extra])} ORDER BY e.created_at DESC, e.id DESC LIMIT ${f.limit + 1}`,
    );
  const [rows, counted] = await Promise.all([
    f.cursor || f.from ? read() : newestPage(read, f.limit),
    f.cursor ? LATER_PAGE : countUpToCap(db, raw('events e'), eventConditions(projectId, f)),
  ]);
  const page = rows.slice(0, f.limit);
  const last = page.at(-1);
  const hasMore = rows.length > f.limit;
  return {
    data: page.map(toEventDto),
    cursor: hasMore && last ? encodeCursor({ v: last.sort_value, id: last.id }) : null,
    hasMore,
    ...counted,
  };
}

/** How far back the first page of a project's events looks before it reads every month. */
const RECENT_MS = 86_400_000;

/**
 * The first page without a time range, read from the newest partitions when it can be: sorted by
 * `created_at`, it would otherwise open every month's index for its first entry (12 of them after a
 * year: 4 ms more per page at 50M events, bench/results/2026-11-27-eleventh-sitting.md). An id is
 * never more than a day older than its `created_at` (`idsSince`), so an event outside the ids since
 * `since` minus a day was created before `since`: when the page read from those ids ends at or after
 * `since`, no other event belongs on it. Otherwise (a quiet project) the whole history is read.
 */
async function newestPage(page: (extra: Sql[]) => Promise<EventRow[]>, limit: number): Promise<EventRow[]> {
  const since = new Date(Date.now() - RECENT_MS);
  const recent = await page([idsSince(raw('e.id'), since)]);
  const last = recent.at(-1);
  if (recent.length === limit + 1 && last && last.created_at.getTime() >= since.getTime()) return recent;
  return page([]);
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

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;

/** The UTC day of an instant, as a SQL date. */
const utcDate = (at: Date) => sql`(${at}::timestamptz AT TIME ZONE 'UTC')::date`;

/**
 * The analytics rollup's counts per event name and UTC day over the whole UTC days [`dayFrom`,
 * `dayTo`) (midnights), as rows (name, day date, count), one or more per name and day: the folded
 * hours' sums (`event_counts_daily`) plus those days' hours not folded yet (`part >= 0`). `names`
 * limits the names. Both tables are analytics' (written by its feed consumer and fold); the
 * fragment lives here because analytics sits above this module and both read it.
 */
export function wholeDayCounts(projectId: string, dayFrom: Date, dayTo: Date, names?: readonly string[]): Sql {
  const named = names ? sql`AND name = ANY(${names}::text[])` : raw('');
  return sql`SELECT name, day, count FROM event_counts_daily
      WHERE project_id = ${projectId}::uuid AND day >= ${utcDate(dayFrom)} AND day < ${utcDate(dayTo)} ${named}
      UNION ALL
      SELECT name, (hour AT TIME ZONE 'UTC')::date, count FROM event_counts
      WHERE project_id = ${projectId}::uuid AND part >= 0 AND hour >= ${dayFrom} AND hour < ${dayTo} ${named}`;
}

/**
 * The rollup's counts of a project per event name and UTC day over whole hours [`from`, `to`), in
 * one statement (one snapshot): the whole UTC days inside the range from `wholeDayCounts`, the
 * hours of the partial days at either end from `event_counts`.
 */
function countsByNameAndDay(db: Queryable, projectId: string, from: Date, to: Date) {
  const firstDay = Math.ceil(from.getTime() / DAY_MS) * DAY_MS;
  const lastDay = Math.floor(to.getTime() / DAY_MS) * DAY_MS;
  // No whole day inside: the edges cover the range, the days read nothing.
  const [dayFrom, dayTo] = firstDay < lastDay ? [new Date(firstDay), new Date(lastDay)] : [to, to];
  return queryRows<{ name: string; day: string; count: number }>(
    db,
    sql`SELECT name, to_char(day, 'YYYY-MM-DD') AS day, sum(count)::int AS count FROM (
          ${wholeDayCounts(projectId, dayFrom, dayTo)}
          UNION ALL
          SELECT name, (hour AT TIME ZONE 'UTC')::date, count FROM event_counts
          WHERE project_id = ${projectId}::uuid
            AND (hour >= ${from} AND hour < ${dayFrom} OR hour >= ${dayTo} AND hour < ${to})
        ) c GROUP BY 1, 2`,
  );
}

/**
 * Counts per name and per UTC day over a range (default: the 30 days before `now`), from the
 * analytics rollup (`event_counts`, hourly): the cost does not grow with the project's history,
 * and counts survive raw-event retention. The range is widened to whole hours; an empty or
 * inverted range counts nothing.
 */
export async function eventStats(db: Queryable, projectId: string, range: { from?: string; to?: string }, now: Date) {
  const toGiven = range.to ? new Date(range.to) : now;
  const fromGiven = range.from ? new Date(range.from) : new Date(toGiven.getTime() - 30 * DAY_MS);
  const empty = fromGiven.getTime() >= toGiven.getTime();
  const from = empty ? fromGiven : new Date(Math.floor(fromGiven.getTime() / HOUR_MS) * HOUR_MS);
  const to = empty ? toGiven : new Date(Math.ceil(toGiven.getTime() / HOUR_MS) * HOUR_MS);
  const rows = empty ? [] : await countsByNameAndDay(db, projectId, from, to);
  const byName = new Map<string, number>();
  const byDay = new Map<string, number>();
  for (const r of rows) {
    byName.set(r.name, (byName.get(r.name) ?? 0) + r.count);
    byDay.set(r.day, (byDay.get(r.day) ?? 0) + r.count);
  }
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    total: rows.reduce((sum, r) => sum + r.count, 0),
    byName: [...byName]
      .map(([name, count]) => ({ name, count }))
      .sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    byDay: [...byDay].map(([day, count]) => ({ day, count })).sort((a, b) => (a.day < b.day ? -1 : 1)),
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
