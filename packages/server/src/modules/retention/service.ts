import type pg from 'pg';
import { deleteInBatches as deleteByCtid } from '../../db/batched-delete.js';
import { type HistoryTable, historyPartitions } from '../../db/partitions.js';
import { queryRows, raw, runStatement, sql } from '../../db/query.js';
import { inTransaction } from '../../db/sql.js';

/** Rows a single retention statement may touch at most. */
export const RETENTION_BATCH = 5_000;
const DDL_LOCK_TIMEOUT = '2s';
const FIRST_ID = '00000000-0000-0000-0000-000000000000';
/** Mail still on its way keeps its row and its content whatever its age. */
const IN_FLIGHT = raw(`status IN ('QUEUED', 'SENDING')`);

interface ProjectRetention {
  id: string;
  events_days: number;
  content_days: number;
  emails_days: number;
}

export interface RetentionRun {
  droppedPartitions: string[];
  eventsDeleted: number;
  emailsDeleted: number;
  contentCleared: number;
  /** The most rows any one statement of the run touched (never more than the batch). */
  largestStatement: number;
}

interface RunState extends RetentionRun {
  batch: number;
}

/**
 * Applies every project's retention: drops the monthly partitions of `events` and `emails` that
 * are past every project's retention, then, per project, deletes older events and emails and
 * clears older messages' content in statements of at most `batch` rows each.
 */
export async function applyRetention(pool: pg.Pool, opts: { batch?: number; now?: Date } = {}): Promise<RetentionRun> {
  const run: RunState = {
    batch: opts.batch ?? RETENTION_BATCH,
    droppedPartitions: [],
    eventsDeleted: 0,
    emailsDeleted: 0,
    contentCleared: 0,
    largestStatement: 0,
  };
  const now = opts.now ?? new Date();
  const projects = await queryRows<ProjectRetention>(
    pool,
    sql`SELECT id, retention_events_days AS events_days, retention_content_days AS content_days,
               retention_emails_days AS emails_days FROM projects ORDER BY id`,
  );
  const longest = (days: (p: ProjectRetention) => number, fallback: number) =>
    Math.max(fallback, ...projects.map(days));
  await dropExpiredPartitions(
    pool,
    run,
    'events',
    cutoff(
      now,
      longest((p) => p.events_days, 0),
    ),
  );
  await dropExpiredPartitions(
    pool,
    run,
    'emails',
    cutoff(
      now,
      longest((p) => p.emails_days, 0),
    ),
  );
  for (const project of projects) {
    run.eventsDeleted += await deleteExpired(pool, run, 'events', project.id, cutoff(now, project.events_days));
    run.emailsDeleted += await deleteExpired(pool, run, 'emails', project.id, cutoff(now, project.emails_days));
    run.contentCleared += await clearContent(pool, run, project.id, cutoff(now, project.content_days));
  }
  const { batch: _batch, ...result } = run;
  return result;
}

/** The lowest id of `days` days before `now`: everything below it is older. */
function cutoff(now: Date, days: number): string {
  const ms = now.getTime() - days * 86_400_000;
  const hex = Math.max(0, ms).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

function count(run: RunState, rows: number): number {
  run.largestStatement = Math.max(run.largestStatement, rows);
  return rows;
}

/** Repeats a statement that touches at most `run.batch` rows until it touches fewer. */
async function inBatches(run: RunState, statement: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = count(run, await statement());
    total += n;
    if (n < run.batch) return total;
  }
}

async function dropExpiredPartitions(pool: pg.Pool, run: RunState, table: HistoryTable, before: string) {
  const expired = (await historyPartitions(pool, table)).filter((p) => p.to !== null && p.to <= before);
  for (const part of expired) {
    const name = raw(part.name);
    if (table === 'emails') {
      const [inFlight] = await queryRows(pool, sql`SELECT 1 FROM ${name} WHERE ${IN_FLIGHT} LIMIT 1`);
      if (inFlight) continue;
      // Detaching checks that nothing references the partition; the references go first, in batches.
      const clicks = await deleteByCtid(
        pool,
        raw('email_link_clicks'),
        sql`email_id >= ${part.from}::uuid AND email_id < ${part.to}::uuid`,
        run.batch,
      );
      count(run, clicks.largestStatement);
      await inBatches(run, () =>
        runStatement(
          pool,
          sql`UPDATE suppressions SET email_id = NULL WHERE id IN (SELECT id FROM suppressions
                WHERE email_id >= ${part.from}::uuid AND email_id < ${part.to}::uuid LIMIT ${run.batch})`,
        ),
      );
    }
    await inTransaction(pool, async (client) => {
      await client.query(`SET LOCAL lock_timeout = '${DDL_LOCK_TIMEOUT}'`);
      await runStatement(client, sql`ALTER TABLE ${raw(table)} DETACH PARTITION ${name}`);
      await runStatement(client, sql`DROP TABLE ${name}`);
    });
    run.droppedPartitions.push(part.name);
  }
}

async function deleteExpired(pool: pg.Pool, run: RunState, table: HistoryTable, projectId: string, before: string) {
  const keep = table === 'emails' ? sql` AND NOT ${IN_FLIGHT}` : raw('');
  return inBatches(run, () =>
    runStatement(
      pool,
      sql`DELETE FROM ${raw(table)} WHERE id IN (SELECT id FROM ${raw(table)}
            WHERE project_id = ${projectId}::uuid AND id < ${before}::uuid${keep} LIMIT ${run.batch})`,
    ),
  );
}

/**
 * Empties the content of the project's messages older than `before`, oldest first from where the
 * last run stopped, never past a message still on its way (so a scheduled message keeps what it
 * will send). Addresses, subject, status, times and counters stay.
 */
async function clearContent(pool: pg.Pool, run: RunState, projectId: string, before: string) {
  const [inFlight] = await queryRows<{ id: string }>(
    pool,
    sql`SELECT id FROM emails WHERE project_id = ${projectId}::uuid AND id < ${before}::uuid AND ${IN_FLIGHT}
        ORDER BY id LIMIT 1`,
  );
  const until = inFlight && inFlight.id < before ? inFlight.id : before;
  const [progress] = await queryRows<{ from: string }>(
    pool,
    sql`SELECT content_cleared_before::text AS from FROM retention_progress WHERE project_id = ${projectId}::uuid`,
  );
  let from = progress?.from ?? FIRST_ID;
  let cleared = 0;
  while (from < until) {
    const [batch] = await inTransaction(pool, async (client) => {
      const rows = await queryRows<{ n: number; cleared: number; last: string | null }>(
        client,
        sql`WITH picked AS (
              SELECT id FROM emails WHERE project_id = ${projectId}::uuid AND id >= ${from}::uuid AND id < ${until}::uuid
              ORDER BY id LIMIT ${run.batch}
            ), cleared AS (
              UPDATE emails e SET html = '', text = '', headers = '{}', attachments = '[]'
              FROM picked WHERE e.id = picked.id AND NOT e.${IN_FLIGHT}
                AND (e.html <> '' OR e.text <> '' OR e.headers <> '{}' OR e.attachments <> '[]')
              RETURNING 1
            )
            SELECT count(*)::int AS n, (SELECT count(*)::int FROM cleared) AS cleared, max(id::text) AS last FROM picked`,
      );
      const next = rows[0]?.n === run.batch && rows[0].last ? successor(rows[0].last) : until;
      await runStatement(
        client,
        sql`INSERT INTO retention_progress (project_id, content_cleared_before) VALUES (${projectId}::uuid, ${next}::uuid)
            ON CONFLICT (project_id) DO UPDATE SET content_cleared_before = EXCLUDED.content_cleared_before`,
      );
      return [{ n: rows[0]?.n ?? 0, cleared: rows[0]?.cleared ?? 0, next }];
    });
    count(run, batch?.n ?? 0);
    cleared += batch?.cleared ?? 0;
    from = batch?.next ?? until;
  }
  return cleared;
}

/** The next uuid after `id` (ids compare as their hex text). */
function successor(id: string): string {
  const hex = id.replace(/-/g, '');
  const next = (BigInt(`0x${hex}`) + 1n).toString(16).padStart(32, '0');
  return `${next.slice(0, 8)}-${next.slice(8, 12)}-${next.slice(12, 16)}-${next.slice(16, 20)}-${next.slice(20)}`;
}
