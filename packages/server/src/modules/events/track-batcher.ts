import { certainlyRolledBack, lostToConcurrency } from '../../db/errors.js';
import type { Queryable } from '../../db/sql.js';
import { trackGroupRows } from '../../metrics/registry.js';
import {
  runTrackStatement,
  type TrackOwner,
  type TrackRow,
  type TrackRowOutcome,
  type TrackStatementOptions,
} from './track-statement.js';

/** Runs of a single row that lost to a concurrent transaction (deadlock, serialization) before its caller gets the error. */
const CONFLICT_ATTEMPTS = 3;

export interface TrackBatcherOptions extends TrackStatementOptions {
  /** Rows in one statement at most. */
  maxRows: number;
  /** Statements in flight at once at most; tracks arriving meanwhile wait and go together in the next. */
  maxStatements: number;
  /** Another statement starts only while every one in flight has run at least this long (ms). */
  stallMs: number;
}

interface Pending {
  row: TrackRow;
  resolve: (outcome: TrackRowOutcome) => void;
  reject: (err: unknown) => void;
}

interface OwnerQueue {
  owner: TrackOwner;
  pending: Pending[];
}

const ownerId = (owner: TrackOwner) =>
  owner.by === 'project' ? `project:${owner.projectId}` : `${owner.by}:${owner.keyHash.toString('hex')}`;

/**
 * Groups concurrent tracks into multi-row statements (group commit). There is no waiting window:
 * with no statement in flight a track goes at once, alone; while one runs, the tracks that arrive
 * meanwhile queue per owner (key or project) and the next statement takes up to `maxRows` of one
 * owner's queue — one round trip and one commit for all of them. Every caller is answered when the
 * statement holding its own row has committed. Owners take turns, so one busy project cannot
 * starve another.
 *
 * One statement at a time makes the biggest groups, and PostgreSQL does the least per track (two
 * concurrent statements cost it ~40% more CPU per track for the same throughput: bench results of
 * 2026-11-26, seventh sitting). A second statement, up to `maxStatements`, starts only when every
 * statement in flight has run `stallMs` or more: one stalled on a row lock does not hold every
 * track of the process.
 *
 * A group PostgreSQL refused (one row breaking a constraint, a deadlock) is retried one row per
 * statement, so only the bad row's caller sees the error. A single row that lost a deadlock or a
 * serialization conflict is run again, up to `CONFLICT_ATTEMPTS` times in all.
 */
export class TrackBatcher {
  private readonly queues = new Map<string, OwnerQueue>();
  /** Start times (performance.now()) of the statements in flight, oldest first. */
  private readonly running: number[] = [];
  private stallTimer: NodeJS.Timeout | undefined;
  /** Statements run so far (groups and single-row retries): how much grouping saved. */
  statements = 0;

  constructor(
    private readonly db: Queryable,
    private readonly options: TrackBatcherOptions,
  ) {}

  track(owner: TrackOwner, row: TrackRow): Promise<TrackRowOutcome> {
    return new Promise((resolve, reject) => {
      const id = ownerId(owner);
      let queue = this.queues.get(id);
      if (!queue) {
        queue = { owner, pending: [] };
        this.queues.set(id, queue);
      }
      queue.pending.push({ row, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queues.size > 0 && this.mayStart()) {
      const [id, queue] = this.queues.entries().next().value as [string, OwnerQueue];
      const group = takeGroup(queue.pending, this.options.maxRows);
      trackGroupRows.observe(group.length);
      // The owner goes to the back of the line (or leaves it when its queue is empty).
      this.queues.delete(id);
      if (queue.pending.length > 0) this.queues.set(id, queue);
      const started = performance.now();
      this.running.push(started);
      this.runGroup(queue.owner, group).finally(() => {
        this.running.splice(this.running.indexOf(started), 1);
        this.pump();
      });
    }
    this.watchForStall();
  }

  /** Nothing in flight, or room for one more and the newest statement in flight has stalled. */
  private mayStart(): boolean {
    const { running } = this;
    if (running.length === 0) return true;
    if (running.length >= this.options.maxStatements) return false;
    return performance.now() - (running[running.length - 1] as number) >= this.options.stallMs;
  }

  /** With tracks waiting behind statements that may stall, looks again when the newest would have. */
  private watchForStall(): void {
    if (this.stallTimer || this.queues.size === 0) return;
    const { running } = this;
    if (running.length === 0 || running.length >= this.options.maxStatements) return;
    const wait = (running[running.length - 1] as number) + this.options.stallMs - performance.now();
    this.stallTimer = setTimeout(
      () => {
        this.stallTimer = undefined;
        this.pump();
      },
      Math.max(0, Math.ceil(wait)),
    );
    this.stallTimer.unref();
  }

  private async runGroup(owner: TrackOwner, group: Pending[], attempt = 1): Promise<void> {
    this.statements++;
    try {
      const outcomes = await runTrackStatement(
        this.db,
        owner,
        group.map((p) => p.row),
        this.options,
      );
      group.forEach((p, i) => {
        p.resolve(outcomes[i] as TrackRowOutcome);
      });
    } catch (err) {
      // Retried alone only when PostgreSQL certainly rolled the group back; after a lost
      // connection the group may have committed, and a retry could record it twice.
      if (group.length > 1 && certainlyRolledBack(err)) await Promise.all(group.map((p) => this.runGroup(owner, [p])));
      else if (lostToConcurrency(err) && attempt < CONFLICT_ATTEMPTS) await this.runGroup(owner, group, attempt + 1);
      else for (const p of group) p.reject(err);
    }
  }
}

/**
 * Takes up to `max` rows off the front of the queue, leaving (in order) any whose email or
 * Idempotency-Key is already in the group: one statement cannot upsert a contact twice.
 */
function takeGroup(pending: Pending[], max: number): Pending[] {
  const group: Pending[] = [];
  const left: Pending[] = [];
  const emails = new Set<string>();
  const keys = new Set<string>();
  for (const p of pending) {
    const key = p.row.idempotencyKey;
    if (group.length >= max || emails.has(p.row.email) || (key !== null && keys.has(key))) {
      left.push(p);
      continue;
    }
    emails.add(p.row.email);
    if (key !== null) keys.add(key);
    group.push(p);
  }
  pending.splice(0, pending.length, ...left);
  return group;
}
