import type { Queryable } from '../../db/sql.js';
import { certainlyRolledBack } from '../../http/error-handler.js';
import { trackGroupRows } from '../../metrics/registry.js';
import {
  runTrackStatement,
  type TrackOwner,
  type TrackRow,
  type TrackRowOutcome,
  type TrackStatementOptions,
} from './track-statement.js';

export interface TrackBatcherOptions extends TrackStatementOptions {
  /** Rows in one statement at most. */
  maxRows: number;
  /** Statements in flight at once; tracks arriving meanwhile wait and go together in the next. */
  maxStatements: number;
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
 * while fewer than `maxStatements` statements are in flight a track goes at once, alone; when
 * they are all busy, the tracks that arrive meanwhile queue per owner (key or project) and the next
 * free slot takes up to `maxRows` of one owner's queue in one statement — one round trip and one
 * commit for all of them. Every caller is answered when the statement holding its own row has
 * committed. Owners take turns, so one busy project cannot starve another.
 *
 * A group PostgreSQL refused (one row breaking a constraint, a deadlock) is retried one row per
 * statement, so only the bad row's caller sees the error.
 */
export class TrackBatcher {
  private readonly queues = new Map<string, OwnerQueue>();
  private inFlight = 0;
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
    while (this.inFlight < this.options.maxStatements && this.queues.size > 0) {
      const [id, queue] = this.queues.entries().next().value as [string, OwnerQueue];
      const group = takeGroup(queue.pending, this.options.maxRows);
      trackGroupRows.observe(group.length);
      // The owner goes to the back of the line (or leaves it when its queue is empty).
      this.queues.delete(id);
      if (queue.pending.length > 0) this.queues.set(id, queue);
      this.inFlight++;
      this.runGroup(queue.owner, group).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async runGroup(owner: TrackOwner, group: Pending[]): Promise<void> {
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
