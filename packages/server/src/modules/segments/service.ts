import type { ConditionTree, Segment, SegmentCreate, SegmentType, SegmentUpdate } from '@pigeon/contract';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import type { z } from 'zod';
import type { Config } from '../../config/index.js';
import { queryRows, sql } from '../../db/query.js';
import { isUuid } from '../../db/scoped.js';
import { inTransaction, type Queryable, withQueryLimits } from '../../db/sql.js';
import { badRequest, conflict, notFound } from '../../kit/errors.js';
import {
  type CheckedCondition,
  checkCondition,
  conditionSql,
  dependsOnClock,
  loadScope,
  prepareCondition,
  refsOf,
  treesInScope,
} from '../conditions/public.js';
import { type ContactRow, contactTotal, toContactDto } from '../contacts/public.js';
import { dropRefs, findUsages, groupUsages, saveRefs } from '../references/public.js';
import { syncMembers } from './membership.js';

export interface SegmentRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  type: SegmentType;
  condition: ConditionTree | null;
  track_membership: boolean;
  slug: string;
  member_count: number;
  member_count_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export const toSegmentDto = (row: SegmentRow): Segment => ({
  id: row.id,
  name: row.name,
  description: row.description,
  type: row.type,
  condition: row.condition,
  trackMembership: row.track_membership,
  slug: row.slug,
  memberCount: row.member_count,
  memberCountAt: row.member_count_at?.toISOString() ?? null,
  projectId: row.project_id,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/**
 * A segment row as the API shows it: STATIC and tracked segments count their member rows (exact,
 * kept by a sharded trigger); other DYNAMIC segments show their cached count.
 */
const SEGMENT_ROW = sql`SELECT s.id, s.project_id, s.name, s.description, s.type, s.condition, s.track_membership, s.slug,
    CASE WHEN s.type = 'STATIC' OR s.track_membership
      THEN COALESCE((SELECT sum(n) FROM segment_member_counts m WHERE m.segment_id = s.id), 0)::int
      ELSE s.member_count END AS member_count,
    s.member_count_at, s.created_at, s.updated_at
  FROM segments s`;

export async function findSegment(db: Queryable, projectId: string, id: string): Promise<SegmentRow> {
  if (!isUuid(id)) throw notFound('Segment');
  const [row] = await queryRows<SegmentRow>(
    db,
    sql`${SEGMENT_ROW} WHERE s.project_id = ${projectId}::uuid AND s.id = ${id}::uuid`,
  );
  if (!row) throw notFound('Segment');
  return row;
}

/** `segment.<slug>.entry`: lower-case letters, digits and dashes, fixed when the segment is created. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return slug || 'segment';
}

async function freeSlug(db: Queryable, projectId: string, name: string): Promise<string> {
  const base = slugify(name);
  const rows = await queryRows<{ slug: string }>(
    db,
    sql`SELECT slug FROM segments WHERE project_id = ${projectId} AND (slug = ${base}::text OR slug LIKE ${base}::text || '-%')`,
  );
  const taken = new Set(rows.map((r) => r.slug));
  let slug = base;
  for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
  return slug;
}

type CreateInput = z.output<typeof SegmentCreate>;

/** How long condition queries may run and how old a cached count may be (from config). */
export type SegmentOptions = Config['segments'];

/** Runs condition queries over the whole project under the configured statement timeout. */
const timed = <T>(pool: pg.Pool, opts: SegmentOptions, work: (client: pg.PoolClient) => Promise<T>) =>
  withQueryLimits(pool, { timeoutMs: opts.queryTimeoutMs, workMemMb: opts.workMemMb }, work);

export async function createSegment(pool: pg.Pool, projectId: string, input: CreateInput, opts: SegmentOptions) {
  const checked = await conditionForType(pool, projectId, input.type, input.condition);
  // One transaction with the baseline: the feed's consumer never sees a tracked segment without
  // its member rows (a contact tracked just before would otherwise enter it with an event).
  const segment = await timed(pool, opts, async (client) => {
    // Two creates with one name at once would pick the same free slug; they take turns instead
    // (the second gets `name-2`, as it would a moment later).
    await queryRows(
      client,
      sql`SELECT pg_advisory_xact_lock(hashtextextended(${`segment-slug:${projectId}`}::text, 0))`,
    );
    const [created] = await queryRows<SegmentRow>(
      client,
      sql`INSERT INTO segments (id, project_id, name, description, type, condition, track_membership, slug)
          VALUES (${uuidv7()}, ${projectId}, ${input.name}, ${input.description ?? null}, ${input.type},
                  ${input.condition ? JSON.stringify(input.condition) : null}::jsonb, ${input.trackMembership},
                  ${await freeSlug(client, projectId, input.name)})
          RETURNING *`,
    );
    const row = created as SegmentRow;
    if (checked) await saveRefs(client, projectId, { type: 'segment', id: row.id }, refsOf(checked.refs));
    return recount(client, row, checked, { baseline: row.track_membership });
  });
  return toSegmentDto(segment);
}

/** DYNAMIC needs a condition and STATIC refuses one (DESIGN.md §3: never silently dropped). */
async function conditionForType(
  db: Queryable,
  projectId: string,
  type: SegmentType,
  condition: ConditionTree | null | undefined,
  selfId?: string,
): Promise<CheckedCondition | undefined> {
  if (type === 'STATIC') {
    if (condition) {
      throw badRequest('A STATIC segment has no condition: add its members with POST /segments/:id/members');
    }
    return undefined;
  }
  if (!condition) throw badRequest('condition: a DYNAMIC segment needs a condition object');
  return checkCondition(db, projectId, condition, { selfId });
}

/**
 * Counts the members now and caches the count. A DYNAMIC segment that tracks membership gets
 * its member rows first: silently as a `baseline` (tracking just started), or with entry and exit
 * events for every difference.
 */
async function recount(
  db: Queryable,
  row: SegmentRow,
  checked: CheckedCondition | undefined,
  opts: { baseline?: boolean; emit?: boolean } = {},
): Promise<SegmentRow> {
  if (checked && row.track_membership && (opts.baseline || opts.emit)) {
    const condition = conditionSql(checked.tree, checked.scope);
    await syncMembers(db, row.project_id, row.id, condition, opts.emit === true);
  } else if (checked && !row.track_membership) {
    const count = sql`SELECT count(*)::int AS n FROM contacts c
          WHERE c.project_id = ${row.project_id}::uuid AND ${conditionSql(checked.tree, checked.scope)}`;
    await queryRows(
      db,
      sql`UPDATE segments SET member_count = (${count}), member_count_at = now() WHERE id = ${row.id}::uuid`,
    );
  } else {
    // Member rows are counted as they change; a refresh only says the count was looked at now.
    await queryRows(db, sql`UPDATE segments SET member_count_at = now() WHERE id = ${row.id}::uuid`);
  }
  return findSegment(db, row.project_id, row.id);
}

/** The stored condition, prepared with the segments it reaches (stored conditions were valid when saved). */
async function storedCondition(db: Queryable, row: SegmentRow): Promise<CheckedCondition | undefined> {
  if (!row.condition) return undefined;
  const { tree, refs } = prepareCondition(row.condition);
  return { tree, refs, scope: await loadScope(db, row.project_id, [tree]) };
}

/**
 * How many contacts a condition matches now (a builder's live count); nothing is saved. Projects
 * over `liveCountExactUpTo` contacts are counted on a repeatable page sample of about that many
 * (TABLESAMPLE SYSTEM, as the field catalog) and the count extrapolated, `sampled: true`: a
 * condition over a million contacts costs a whole scan (~0.5–0.9 s on this machine kind, measured
 * in the console-budgets bench), too slow to follow typing. Saving a segment counts exactly.
 */
export async function countCondition(pool: pg.Pool, projectId: string, condition: ConditionTree, opts: SegmentOptions) {
  const checked = await checkCondition(pool, projectId, condition, { prefix: 'condition' });
  const matches = conditionSql(checked.tree, checked.scope);
  const total = await contactTotal(pool, projectId);
  const sampled = total > opts.liveCountExactUpTo;
  const from = sampled
    ? sql`contacts c TABLESAMPLE SYSTEM (${Math.min(100, (100 * opts.liveCountExactUpTo) / total)}) REPEATABLE (11)`
    : sql`contacts c`;
  const [row] = await timed(pool, opts, (client) =>
    queryRows<{ seen: number; matched: number }>(
      client,
      sql`SELECT count(*)::int AS seen, count(*) FILTER (WHERE ${matches})::int AS matched
          FROM ${from} WHERE c.project_id = ${projectId}::uuid`,
    ),
  );
  const seen = row?.seen ?? 0;
  const matched = row?.matched ?? 0;
  if (!sampled) return { count: matched, sampled: false, sampleSize: seen };
  return { count: seen > 0 ? Math.round((matched / seen) * total) : 0, sampled: true, sampleSize: seen };
}

/** What references the segment: the owners that make its deletion a 409. */
export async function segmentUsage(db: Queryable, projectId: string, id: string) {
  await findSegment(db, projectId, id);
  const { campaigns, workflows, segments } = groupUsages(await findUsages(db, projectId, { type: 'segment', key: id }));
  return { campaigns, workflows, segments };
}

export async function listSegments(db: Queryable, projectId: string) {
  const rows = await queryRows<SegmentRow>(
    db,
    sql`${SEGMENT_ROW} WHERE s.project_id = ${projectId}::uuid ORDER BY s.created_at DESC, s.id DESC`,
  );
  return rows.map(toSegmentDto);
}

export async function getSegment(db: Queryable, projectId: string, id: string) {
  return toSegmentDto(await findSegment(db, projectId, id));
}

type UpdateInput = z.output<typeof SegmentUpdate>;

export async function updateSegment(
  pool: pg.Pool,
  projectId: string,
  id: string,
  patch: UpdateInput,
  opts: SegmentOptions,
) {
  const before = await findSegment(pool, projectId, id);
  if (patch.condition && before.type === 'STATIC') {
    throw badRequest('A STATIC segment has no condition: its members are managed with /segments/:id/members');
  }
  const checked = patch.condition
    ? await conditionForType(pool, projectId, before.type, patch.condition, id)
    : await storedCondition(pool, before);
  // The recount commits with the change (see createSegment: tracking that starts has its baseline at once).
  const segment = await timed(pool, opts, async (client) => {
    const [updated] = await queryRows<SegmentRow>(
      client,
      sql`UPDATE segments SET
            name = COALESCE(${patch.name ?? null}, name),
            description = CASE WHEN ${patch.description !== undefined} THEN ${patch.description ?? null} ELSE description END,
            condition = COALESCE(${patch.condition ? JSON.stringify(patch.condition) : null}::jsonb, condition),
            track_membership = COALESCE(${patch.trackMembership ?? null}::boolean, track_membership),
            updated_at = now()
          WHERE id = ${id}::uuid RETURNING *`,
    );
    if (patch.condition && checked) await saveRefs(client, projectId, { type: 'segment', id }, refsOf(checked.refs));
    if (before.type === 'DYNAMIC' && before.track_membership && updated?.track_membership === false) {
      await queryRows(client, sql`DELETE FROM segment_members WHERE segment_id = ${id}`);
    }
    const row = updated as SegmentRow;
    if (!patch.condition && row.track_membership === before.track_membership) return findSegment(client, projectId, id);
    const startsTracking = row.track_membership && !before.track_membership;
    return recount(client, row, checked, { baseline: startsTracking, emit: !startsTracking });
  });
  return toSegmentDto(segment);
}

/** 409 while anything (another segment's condition, a campaign, a workflow step) still refers to it. */
export async function deleteSegment(pool: pg.Pool, projectId: string, id: string): Promise<void> {
  await findSegment(pool, projectId, id);
  const users = await findUsages(
    pool,
    projectId,
    { type: 'segment', key: id },
    { exceptOwner: { type: 'segment', id }, activeOnly: true },
  );
  if (users.length > 0) {
    throw conflict(
      `The segment is still used by ${users.map((u) => `${u.ownerType} "${u.name}" (${u.id})`).join(', ')}`,
      { details: { usedBy: users } },
    );
  }
  await inTransaction(pool, async (client) => {
    await queryRows(client, sql`DELETE FROM segments WHERE project_id = ${projectId} AND id = ${id}`);
    await dropRefs(client, { type: 'segment', id });
  });
}

export async function refreshSegment(pool: pg.Pool, projectId: string, id: string, opts: SegmentOptions) {
  const row = await findSegment(pool, projectId, id);
  const checked = await storedCondition(pool, row);
  return toSegmentDto(await timed(pool, opts, (c) => recount(c, row, checked)));
}

export async function computeSegment(pool: pg.Pool, projectId: string, id: string, opts: SegmentOptions) {
  const row = await findSegment(pool, projectId, id);
  const checked = await storedCondition(pool, row);
  if (!checked || !row.track_membership) {
    throw badRequest(
      'compute applies to DYNAMIC segments with trackMembership; use POST /segments/:id/refresh to recount',
      {
        suggestion: 'PATCH the segment with {"trackMembership": true} to record entry and exit events.',
      },
    );
  }
  return timed(pool, opts, (c) => syncMembers(c, projectId, id, conditionSql(checked.tree, checked.scope), true));
}

/**
 * One page of members, newest first. DYNAMIC segments are evaluated live. An untracked one's page
 * and total come from one statement (`count(*) OVER ()`, one snapshot), and its cached count takes
 * the live one. A tracked one's total is its kept member count (what `GET /segments/:id` shows,
 * at most a feed poll behind a change; a time-relative condition, a sweep): counting every match
 * live would read the whole segment on each page. STATIC segments page their member rows, whose
 * count is kept exact as they change.
 */
export async function segmentContacts(
  pool: pg.Pool,
  projectId: string,
  id: string,
  page: { page: number; pageSize: number },
  opts: SegmentOptions,
) {
  const row = await findSegment(pool, projectId, id);
  const checked = await storedCondition(pool, row);
  const offset = (page.page - 1) * page.pageSize;
  if (!checked) {
    const contacts = await timed(pool, opts, (c) =>
      queryRows<ContactRow>(
        c,
        sql`SELECT c.* FROM segment_members m JOIN contacts c ON c.id = m.contact_id
              WHERE m.segment_id = ${id}::uuid ORDER BY m.entered_at DESC, m.contact_id DESC
              LIMIT ${page.pageSize} OFFSET ${offset}`,
      ),
    );
    return { data: contacts.map(toContactDto), page: page.page, pageSize: page.pageSize, total: row.member_count };
  }
  const matching = sql`FROM contacts c WHERE c.project_id = ${projectId}::uuid AND ${conditionSql(checked.tree, checked.scope)}`;
  if (row.track_membership) {
    const contacts = await timed(pool, opts, (c) =>
      queryRows<ContactRow>(
        c,
        sql`SELECT c.* ${matching} ORDER BY c.created_at DESC, c.id DESC LIMIT ${page.pageSize} OFFSET ${offset}`,
      ),
    );
    return { data: contacts.map(toContactDto), page: page.page, pageSize: page.pageSize, total: row.member_count };
  }
  const { contacts, total } = await timed(pool, opts, async (c) => {
    const rows = await queryRows<ContactRow & { matched: number }>(
      c,
      sql`SELECT c.*, count(*) OVER ()::int AS matched ${matching}
            ORDER BY c.created_at DESC, c.id DESC LIMIT ${page.pageSize} OFFSET ${offset}`,
    );
    // Past the last page the window has no row to ride on: count on its own.
    const counted =
      rows[0]?.matched ?? (await queryRows<{ n: number }>(c, sql`SELECT count(*)::int AS n ${matching}`))[0]?.n;
    await queryRows(
      c,
      sql`UPDATE segments SET member_count = ${counted ?? 0}, member_count_at = now() WHERE id = ${row.id}::uuid`,
    );
    return { contacts: rows, total: counted ?? 0 };
  });
  const data = contacts.map(({ matched: _, ...contact }) => toContactDto(contact as ContactRow));
  return { data, page: page.page, pageSize: page.pageSize, total };
}

/** Untracked DYNAMIC segments whose cached count is older than `countMaxAgeMs`, recounted. */
export async function recountStale(pool: pg.Pool, opts: SegmentOptions, limit = 50): Promise<number> {
  const rows = await queryRows<SegmentRow>(
    pool,
    sql`SELECT * FROM segments WHERE type = 'DYNAMIC' AND NOT track_membership
          AND (member_count_at IS NULL OR member_count_at < now() - ${`${opts.countMaxAgeMs} milliseconds`}::interval)
        ORDER BY member_count_at NULLS FIRST LIMIT ${limit}`,
  );
  for (const row of rows) {
    const checked = await storedCondition(pool, row);
    await timed(pool, opts, (c) => recount(c, row, checked));
  }
  return rows.length;
}

/**
 * Tracked segments whose conditions move with the clock (`triggeredWithin 7 days`): no write
 * makes a contact leave them, so they are recomputed (with events) by the periodic sweep.
 */
export async function sweepClockSegments(pool: pg.Pool, opts: SegmentOptions): Promise<number> {
  const rows = await queryRows<SegmentRow>(
    pool,
    sql`SELECT * FROM segments WHERE type = 'DYNAMIC' AND track_membership ORDER BY id`,
  );
  let swept = 0;
  for (const row of rows) {
    const checked = await storedCondition(pool, row);
    if (!checked || !dependsOnClockInScope(checked)) continue;
    const condition = conditionSql(checked.tree, checked.scope);
    await timed(pool, opts, (c) => syncMembers(c, row.project_id, row.id, condition, true));
    swept++;
  }
  return swept;
}

const dependsOnClockInScope = (checked: CheckedCondition) =>
  treesInScope([checked.tree], checked.scope).some(dependsOnClock);
