import { queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { insertSegmentMoveEvents } from '../event-log/public.js';

export type Move = 'entry' | 'exit';

export interface MemberMove {
  segmentId: string;
  contactId: string;
  move: Move;
}

/**
 * The one statement every membership change goes through (static member edits, real-time
 * re-evaluation, compute, baselines): insert the entering rows, delete the leaving ones, record
 * `segment.<slug>.entry` / `.exit` on each contact whose row really changed (for segments that
 * track membership, when `emit`); a trigger on the rows keeps member counts. The primary key
 * decides who really entered, so concurrent writers never record an entry twice.
 *
 * `enter` selects (segment_id, contact_id, project_id); `exit` is a DELETE … RETURNING
 * segment_id, contact_id.
 */
function membershipStatement(projectId: string, enter: Sql, exit: Sql, emit: boolean, result: Sql): Sql {
  return sql`
    WITH entered AS (
      INSERT INTO segment_members (segment_id, contact_id, project_id) ${enter}
      ON CONFLICT DO NOTHING RETURNING segment_id, contact_id
    ), exited AS (${exit}),
    moves AS (
      SELECT segment_id, contact_id, 'entry' AS move FROM entered
      UNION ALL SELECT segment_id, contact_id, 'exit' AS move FROM exited
    ), recorded AS (${insertSegmentMoveEvents('moves', projectId, emit)})
    ${result}`;
}

/** Applies listed moves (static member edits, real-time changes); returns the moves that happened. */
export async function applyMoves(db: Queryable, projectId: string, moves: MemberMove[]): Promise<MemberMove[]> {
  if (moves.length === 0) return [];
  const entering = moves.filter((m) => m.move === 'entry');
  const leaving = moves.filter((m) => m.move === 'exit');
  const enter = sql`SELECT s, c, ${projectId}::uuid
    FROM unnest(${entering.map((m) => m.segmentId)}::uuid[], ${entering.map((m) => m.contactId)}::uuid[]) AS x(s, c)`;
  const exit = sql`DELETE FROM segment_members m
    USING unnest(${leaving.map((m) => m.segmentId)}::uuid[], ${leaving.map((m) => m.contactId)}::uuid[]) AS x(s, c)
    WHERE m.segment_id = x.s AND m.contact_id = x.c RETURNING m.segment_id, m.contact_id`;
  const rows = await queryRows<{ segment_id: string; contact_id: string; move: Move }>(
    db,
    membershipStatement(projectId, enter, exit, true, raw('SELECT segment_id, contact_id, move FROM moves')),
  );
  return rows.map((r) => ({ segmentId: r.segment_id, contactId: r.contact_id, move: r.move }));
}

/**
 * Makes a DYNAMIC segment's member rows match its condition, set-based over the whole project.
 * With `emit`, every difference is an entry or exit event; without, the rows are a silent
 * baseline (when tracking starts). Returns the numbers of entries and exits.
 */
export async function syncMembers(
  db: Queryable,
  projectId: string,
  segmentId: string,
  condition: Sql,
  emit: boolean,
): Promise<{ entered: number; exited: number; memberCount: number }> {
  const enter = sql`SELECT ${segmentId}::uuid, c.id, ${projectId}::uuid FROM contacts c
    WHERE c.project_id = ${projectId}::uuid AND ${condition}`;
  const exit = sql`DELETE FROM segment_members m WHERE m.segment_id = ${segmentId}::uuid
    AND NOT EXISTS (SELECT 1 FROM contacts c WHERE c.id = m.contact_id AND ${condition})
    RETURNING m.segment_id, m.contact_id`;
  const [counts] = await queryRows<{ entered: number; exited: number }>(
    db,
    membershipStatement(
      projectId,
      enter,
      exit,
      emit,
      raw(`SELECT (SELECT count(*) FROM entered)::int AS entered, (SELECT count(*) FROM exited)::int AS exited`),
    ),
  );
  const [total] = await queryRows<{ n: number }>(
    db,
    sql`WITH stamped AS (UPDATE segments SET member_count_at = now() WHERE id = ${segmentId}::uuid)
        SELECT COALESCE(sum(n), 0)::int AS n FROM segment_member_counts WHERE segment_id = ${segmentId}::uuid`,
  );
  return { entered: counts?.entered ?? 0, exited: counts?.exited ?? 0, memberCount: total?.n ?? 0 };
}
