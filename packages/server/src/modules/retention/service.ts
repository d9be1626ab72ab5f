import type pg from 'pg';
import { FIRST_ID, lowestIdAt } from '../../db/ids.js';
import { type HistoryTable, historyPartitions, type PartitionInfo } from '../../db/partitions.js';
import { queryRows, raw, runStatement, sql } from '../../db/query.js';
import { inTransaction } from '../../db/sql.js';
import { forgetSuppressionEmails } from '../deliverability/public.js';
import { deleteExpiredDmarcReports } from '../dmarc-reports/public.js';
import { clearEmailContent, deleteExpiredEmails, deleteLinkClicksBetween, IN_FLIGHT } from '../email-states/public.js';
import { deleteExpiredEvents } from '../event-log/public.js';
import { DELIVERY_RETENTION_DAYS, deleteExpiredDeliveries } from '../event-webhooks/public.js';
import { clearInboundContent, deleteExpiredInbound } from '../inbound-routes/public.js';
import { expireFinishedExecutions } from '../workflows/public.js';

/** Rows a single retention statement may touch at most. */
export const RETENTION_BATCH = 5_000;
const DDL_LOCK_TIMEOUT = '2s';
const DAY_MS = 86_400_000;

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
  /** Finished workflow executions past the events' retention, deleted or emptied, and their step runs. */
  executionsExpired: number;
  stepRunsDeleted: number;
  /** Finished event webhook deliveries past their retention (the events', at most DELIVERY_RETENTION_DAYS). */
  deliveriesDeleted: number;
  /** The most rows any one statement of the run touched (never more than the batch). */
  largestStatement: number;
}

interface RunState extends RetentionRun {
  batch: number;
}

/**
 * Applies every project's retention: drops the monthly partitions of `events` and `emails` that
 * are past every project's retention, then, per project, deletes older events and emails,
 * clears older messages' content, expires workflow executions that finished before the events'
 * retention and deletes finished webhook deliveries older than the events' retention (30 days at
 * most), in statements of at most `batch` rows (executions, with their step runs) each.
 */
export async function applyRetention(
  pool: pg.Pool,
  opts: { batch?: number; now?: Date; dayMs?: number } = {},
): Promise<RetentionRun> {
  const run: RunState = {
    batch: opts.batch ?? RETENTION_BATCH,
    droppedPartitions: [],
    eventsDeleted: 0,
    emailsDeleted: 0,
    contentCleared: 0,
    executionsExpired: 0,
    stepRunsDeleted: 0,
    deliveriesDeleted: 0,
    largestStatement: 0,
  };
  const now = opts.now ?? new Date();
  const dayMs = opts.dayMs ?? DAY_MS;
  const cutoff = (days: number) => idBefore(now, days * dayMs);
  const projects = await queryRows<ProjectRetention>(
    pool,
    sql`SELECT id, retention_events_days AS events_days, retention_content_days AS content_days,
               retention_emails_days AS emails_days FROM projects ORDER BY id`,
  );
  const longest = (days: (p: ProjectRetention) => number, fallback: number) =>
    Math.max(fallback, ...projects.map(days));
  await dropExpiredPartitions(pool, run, 'events', cutoff(longest((p) => p.events_days, 0)));
  await dropExpiredPartitions(pool, run, 'emails', cutoff(longest((p) => p.emails_days, 0)));
  for (const project of projects) {
    const events = cutoff(project.events_days);
    const emails = cutoff(project.emails_days);
    run.eventsDeleted += await inBatches(run, () => deleteExpiredEvents(pool, project.id, events, run.batch));
    run.emailsDeleted += await inBatches(run, () => deleteExpiredEmails(pool, project.id, emails, run.batch));
    run.contentCleared += await clearContent(pool, run, project.id, cutoff(project.content_days));
    // Received mail: its content with the sent mail's, the rest with the events.
    run.contentCleared += await inBatches(run, () =>
      clearInboundContent(pool, project.id, cutoff(project.content_days), run.batch),
    );
    await inBatches(run, () => deleteExpiredInbound(pool, project.id, events, run.batch));
    // DMARC reports are counts per source, kept as long as the events they sit beside.
    const reportsBefore = new Date(now.getTime() - project.events_days * dayMs);
    await inBatches(run, () => deleteExpiredDmarcReports(pool, project.id, reportsBefore, run.batch));
    // A finished execution's context and step runs carry its events' data: they go with the events.
    const finishedBefore = new Date(now.getTime() - project.events_days * dayMs);
    run.executionsExpired += await inBatches(run, async () => {
      const expired = await expireFinishedExecutions(pool, project.id, finishedBefore, run.batch);
      run.stepRunsDeleted += expired.stepRuns;
      return expired.executions;
    });
    // A delivery's payload is a copy of an event: it goes with the events, after 30 days at the latest.
    const deliveredBefore = new Date(now.getTime() - Math.min(project.events_days, DELIVERY_RETENTION_DAYS) * dayMs);
    run.deliveriesDeleted += await inBatches(run, () =>
      deleteExpiredDeliveries(pool, project.id, deliveredBefore, run.batch),
    );
  }
  const { batch: _batch, ...result } = run;
  return result;
}

/** The lowest id of `ago` ms before `now`: everything below it is older. */
const idBefore = (now: Date, ago: number): string => lowestIdAt(now.getTime() - ago);

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
  const expired = (await historyPartitions(pool, table)).filter(
    (p): p is PartitionInfo & { from: string; to: string } => p.from !== null && p.to !== null && p.to <= before,
  );
  for (const part of expired) {
    const name = raw(part.name);
    if (table === 'emails') {
      const [inFlight] = await queryRows(pool, sql`SELECT 1 FROM ${name} WHERE ${IN_FLIGHT} LIMIT 1`);
      if (inFlight) continue;
      // Detaching checks that nothing references the partition; the references go first, in batches.
      const clicks = await deleteLinkClicksBetween(pool, part.from, part.to, run.batch);
      count(run, clicks.largestStatement);
      await inBatches(run, () => forgetSuppressionEmails(pool, part.from, part.to, run.batch));
    }
    await inTransaction(pool, async (client) => {
      await client.query(`SET LOCAL lock_timeout = '${DDL_LOCK_TIMEOUT}'`);
      await runStatement(client, sql`ALTER TABLE ${raw(table)} DETACH PARTITION ${name}`);
      await runStatement(client, sql`DROP TABLE ${name}`);
    });
    run.droppedPartitions.push(part.name);
  }
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
    const batch = await inTransaction(pool, async (client) => {
      const picked = await clearEmailContent(client, projectId, from, until, run.batch);
      const next = picked.n === run.batch && picked.last ? successor(picked.last) : until;
      await runStatement(
        client,
        sql`INSERT INTO retention_progress (project_id, content_cleared_before) VALUES (${projectId}::uuid, ${next}::uuid)
            ON CONFLICT (project_id) DO UPDATE SET content_cleared_before = EXCLUDED.content_cleared_before`,
      );
      return { n: picked.n, cleared: picked.cleared, next };
    });
    count(run, batch.n);
    cleared += batch.cleared;
    from = batch.next;
  }
  return cleared;
}

/** The next uuid after `id` (ids compare as their hex text). */
function successor(id: string): string {
  const hex = id.replace(/-/g, '');
  const next = (BigInt(`0x${hex}`) + 1n).toString(16).padStart(32, '0');
  return `${next.slice(0, 8)}-${next.slice(8, 12)}-${next.slice(12, 16)}-${next.slice(16, 20)}-${next.slice(20)}`;
}
