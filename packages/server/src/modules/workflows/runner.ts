import type { ExecutionStatus, StepRunStatus, TransitionBranch } from '@pigeon/contract';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { preparedRows, queryRows, runStatement, sql } from '../../db/query.js';
import { inTransaction } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import type { ListenHub } from '../../jobs/listen-hub.js';
import { type RunningLoop, startLoop } from '../../jobs/loop.js';
import { type ExecutionRow, WORKFLOW_CHANNEL } from './executions.js';
import { type Graph, loadGraph, nextStep, type StepRow } from './graph.js';
import { runStep, type StepContext } from './steps.js';
import { prepareWebhook, recordWebhookResult, sendPreparedWebhook, type WebhookCall } from './webhook-step.js';

/** Steps one claim may run before it lets other executions go first (cycles always pause, so this only bounds work). */
const MAX_STEPS_PER_CLAIM = 100;

interface Claimed extends ExecutionRow {
  version: number;
  workflow_name: string;
}

/** A step record written with the claim's commit. */
interface NewRun {
  id: string;
  step: StepRow;
  status: Extract<StepRunStatus, 'COMPLETED' | 'SKIPPED' | 'FAILED' | 'WAITING'>;
  output: Record<string, unknown> | null;
  error: string | null;
  startedAt: Date;
  finished: boolean;
}

/**
 * The workflow runner: one loop (`jobs/loop.ts`) whose runners each claim due executions
 * (`wake_at <= now()`, FOR UPDATE SKIP LOCKED, so any number of worker processes share the work)
 * and advance them through their steps inside that claim's transaction. What a step does (an email
 * queued, a contact updated) and the record of it commit together: a crash anywhere rolls both back
 * and the claim is redone. A WEBHOOK is the one side effect outside the database: its attempt is
 * committed with the claim (with a lease on the execution), and the loop's `handle` makes the call
 * and records the result in a second transaction.
 */
export async function startWorkflowRunner(deps: AppDeps, hub: ListenHub): Promise<RunningLoop> {
  const graphs = new GraphCache();
  return startLoop<WebhookCall[]>(hub, deps.logger, {
    name: 'workflows',
    channels: [WORKFLOW_CHANNEL],
    concurrency: deps.config.workflows.concurrency,
    claim: () => claimAndAdvance(deps, graphs),
    handle: (calls) => callWebhooks(deps, graphs, calls),
    idleMs: () => untilNextTimer(deps),
    errorPauseMs: 500,
  });
}

/**
 * How long an idle runner may wait: until the earliest timer (a DELAY ending, a wait timing out, a
 * webhook retry), at most `pollMs`. Executions that become due at once (started, resumed) NOTIFY,
 * so waiting executions cost one indexed read per idle runner and timer, not a poll per interval.
 */
async function untilNextTimer(deps: AppDeps): Promise<number> {
  const [row] = await queryRows<{ ms: number | null }>(
    deps.db.pool,
    sql`SELECT (extract(epoch FROM min(wake_at) - now()) * 1000)::float8 AS ms FROM workflow_executions
        WHERE status IN ('RUNNING', 'WAITING') AND wake_at IS NOT NULL`,
  );
  const ms = row?.ms ?? Number.POSITIVE_INFINITY;
  return Math.max(10, Math.min(deps.config.workflows.pollMs, ms + 5));
}

/** Graphs by (workflow, version): every edit bumps the version, so a cached graph is never stale. */
class GraphCache {
  private readonly graphs = new Map<string, { version: number; graph: Graph }>();

  async get(db: pg.PoolClient, workflowId: string, version: number): Promise<Graph> {
    const hit = this.graphs.get(workflowId);
    if (hit?.version === version) return hit.graph;
    const graph = await loadGraph(db, workflowId);
    if (this.graphs.size > 1000) this.graphs.clear();
    this.graphs.set(workflowId, { version, graph });
    return graph;
  }
}

/** Executions one claim takes: their transaction's begin, claim and commit are shared. */
const CLAIM_BATCH = 8;

/**
 * Claims up to CLAIM_BATCH due executions and advances each, in one transaction; answers the
 * webhook calls their walks reached (to make after the commit), or undefined when none was due. An
 * unexpected error rolls the whole claim back: the execution that caused it is marked FAILED
 * (unless the error is transient) and the others are simply claimed again.
 */
async function claimAndAdvance(deps: AppDeps, graphs: GraphCache): Promise<WebhookCall[] | undefined> {
  let current: string | undefined;
  try {
    return await inTransaction(deps.db.pool, async (client) => {
      const executions = await preparedRows<Claimed>(
        client,
        'workflows.claim',
        sql`SELECT x.*, w.version, w.name AS workflow_name FROM workflow_executions x
            JOIN workflows w ON w.id = x.workflow_id
            WHERE x.status IN ('RUNNING', 'WAITING') AND x.wake_at <= now()
            ORDER BY x.wake_at LIMIT ${CLAIM_BATCH} FOR UPDATE OF x SKIP LOCKED`,
      );
      if (executions.length === 0) return undefined;
      const calls: WebhookCall[] = [];
      for (const exec of executions) {
        current = exec.id;
        const graph = await graphs.get(client, exec.workflow_id, exec.version);
        const call = await advance({ client, deps, exec, workflowName: exec.workflow_name }, graph);
        if (call) calls.push(call);
      }
      current = undefined;
      return calls;
    });
  } catch (err) {
    if (current && !isTransient(err)) await failExecution(deps, current, err as Error);
    throw err;
  }
}

/** The webhook calls of a committed claim, each followed by the rest of its walk (which may reach another). */
async function callWebhooks(deps: AppDeps, graphs: GraphCache, calls: WebhookCall[]): Promise<void> {
  for (let call = calls.shift(); call; call = calls.shift()) {
    const next = await finishWebhook(deps, graphs, call);
    if (next) calls.push(next);
  }
}

/**
 * Moves a claimed execution on: first out of the step it paused at (a DELAY that ended, a wait
 * that got its event or timed out), then through steps until one pauses, ends it, or is a webhook.
 */
async function advance(ctx: StepContext, graph: Graph): Promise<WebhookCall | undefined> {
  const { exec } = ctx;
  const current = exec.current_step_id ? graph.steps.get(exec.current_step_id) : undefined;
  if (!current) return finish(ctx, [], 'FAILED', 'its current step was deleted');
  if (exec.status === 'WAITING' || exec.resume_branch) {
    const branch = await endPause(ctx, current);
    return walk(ctx, graph, nextStep(graph, current.id, branch));
  }
  return walk(ctx, graph, current.id);
}

/** Closes the open record of the paused step; says which branch leaves it. */
async function endPause(ctx: StepContext, step: StepRow): Promise<TransitionBranch | null> {
  const { exec } = ctx;
  const branch: TransitionBranch | null =
    step.type === 'WAIT_FOR_EVENT' ? (exec.resume_branch === 'event' ? 'event' : 'timeout') : null;
  const output =
    branch === 'event'
      ? { branch, eventName: exec.context.eventName, eventId: exec.context.eventId, event: exec.context.event }
      : branch === 'timeout'
        ? { branch }
        : { waitedUntil: exec.wake_at?.toISOString() };
  await preparedRows(
    ctx.client,
    'workflows.end-pause',
    sql`UPDATE workflow_step_runs SET status = 'COMPLETED', finished_at = now(), output = COALESCE(output, '{}') || ${JSON.stringify(output)}::jsonb
        WHERE execution_id = ${exec.id}::uuid AND step_id = ${step.id}::uuid AND status = 'WAITING'`,
  );
  return branch;
}

/** Runs steps from `stepId` on, recording each, until the execution pauses, ends or calls a webhook. */
export async function walk(ctx: StepContext, graph: Graph, from: string | undefined): Promise<WebhookCall | undefined> {
  const runs: NewRun[] = [];
  let stepId = from;
  for (let i = 0; i < MAX_STEPS_PER_CLAIM; i++) {
    const step = stepId ? graph.steps.get(stepId) : undefined;
    if (!step) return finish(ctx, runs, 'COMPLETED', null);
    const startedAt = ctx.deps.clock.now();
    const outcome = await runStep(ctx, step);
    const run = (
      status: NewRun['status'],
      output: Record<string, unknown> | null = null,
      error: string | null = null,
    ) => runs.push({ id: uuidv7(), step, status, output, error, startedAt, finished: status !== 'WAITING' });
    switch (outcome.kind) {
      case 'next':
        run(outcome.skipped ? 'SKIPPED' : 'COMPLETED', outcome.output);
        stepId = nextStep(graph, step.id, outcome.branch);
        continue;
      case 'exit':
        run('COMPLETED', { reason: outcome.reason });
        return finish(ctx, runs, 'EXITED', outcome.reason, step.id);
      case 'fail':
        run('FAILED', outcome.output, outcome.error);
        return finish(ctx, runs, 'FAILED', outcome.error, step.id);
      case 'pause':
        run('WAITING', outcome.output);
        await writeRuns(ctx, runs);
        await preparedRows(
          ctx.client,
          'workflows.pause',
          sql`UPDATE workflow_executions SET status = 'WAITING', current_step_id = ${step.id}::uuid,
                wake_at = ${outcome.until}::timestamptz, wait_event = ${outcome.event ?? null}, waiting_since = now(),
                resume_branch = NULL, updated_at = now()
              WHERE id = ${ctx.exec.id}::uuid`,
        );
        return undefined;
      case 'webhook':
        await writeRuns(ctx, runs);
        return prepareWebhook(ctx, step);
    }
  }
  // Long chains give way to other executions: due again at once, from where they stopped.
  await writeRuns(ctx, runs);
  await queryRows(
    ctx.client,
    sql`UPDATE workflow_executions SET status = 'RUNNING', current_step_id = ${stepId}::uuid, wake_at = now(),
          resume_branch = NULL, updated_at = now() WHERE id = ${ctx.exec.id}::uuid`,
  );
  return undefined;
}

async function writeRuns(ctx: StepContext, runs: NewRun[]) {
  if (runs.length === 0) return;
  await preparedRows(
    ctx.client,
    'workflows.step-runs',
    sql`INSERT INTO workflow_step_runs (id, execution_id, step_id, step_type, step_name, status, output, error, attempts, started_at, finished_at)
        SELECT r.id, ${ctx.exec.id}::uuid, r.step_id, r.step_type, r.step_name, r.status, r.output, r.error, 1, r.started_at,
               CASE WHEN r.finished THEN clock_timestamp() END
        FROM jsonb_to_recordset(${JSON.stringify(
          runs.map((r) => ({
            id: r.id,
            step_id: r.step.id,
            step_type: r.step.type,
            step_name: r.step.name,
            status: r.status,
            output: r.output,
            error: r.error,
            started_at: r.startedAt.toISOString(),
            finished: r.finished,
          })),
        )}::jsonb) AS r(id uuid, step_id uuid, step_type text, step_name text, status text, output jsonb, error text,
                        started_at timestamptz, finished boolean)`,
  );
  runs.length = 0;
}

/** Ends the execution: COMPLETED (no step follows), EXITED (an EXIT step) or FAILED. */
async function finish(
  ctx: StepContext,
  runs: NewRun[],
  status: Extract<ExecutionStatus, 'COMPLETED' | 'EXITED' | 'FAILED'>,
  reason: string | null,
  stepId: string | null = ctx.exec.current_step_id,
): Promise<undefined> {
  await writeRuns(ctx, runs);
  await preparedRows(
    ctx.client,
    'workflows.finish',
    sql`UPDATE workflow_executions SET status = ${status}, current_step_id = ${stepId}::uuid, wake_at = NULL,
          wait_event = NULL, resume_branch = NULL, exit_reason = ${reason}, completed_at = now(), updated_at = now()
        WHERE id = ${ctx.exec.id}::uuid`,
  );
  return undefined;
}

/**
 * After the webhook call: record its result and, on success, go on with the execution (in the
 * same transaction); returns the next webhook to call when the walk reaches another one.
 */
async function finishWebhook(deps: AppDeps, graphs: GraphCache, call: WebhookCall): Promise<WebhookCall | undefined> {
  const result = await sendPreparedWebhook(deps, call);
  return inTransaction(deps.db.pool, async (client) => {
    const [exec] = await queryRows<Claimed>(
      client,
      sql`SELECT x.*, w.version, w.name AS workflow_name FROM workflow_executions x
          JOIN workflows w ON w.id = x.workflow_id WHERE x.id = ${call.executionId}::uuid FOR UPDATE OF x`,
    );
    // Cancelled (or taken over after the lease ran out) meanwhile: that owner decides.
    if (exec?.status !== 'RUNNING' || exec.current_step_id !== call.stepId) return undefined;
    const ctx: StepContext = { client, deps, exec, workflowName: exec.workflow_name };
    if ((await recordWebhookResult(ctx, call, result)) !== 'continue') return undefined;
    const graph = await graphs.get(client, exec.workflow_id, exec.version);
    return walk(ctx, graph, nextStep(graph, call.stepId, null));
  });
}

/** Errors after which the same claim may well succeed: lost connections, deadlocks, serialisation, shutdown. */
function isTransient(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return /^(08|40|57P)/.test(code) || code === 'ECONNRESET' || code === 'ECONNREFUSED';
}

/**
 * An unexpected error rolled the claim back: record it so the execution does not come back at
 * once forever. If even this fails (the database is gone), the claim is simply redone later.
 */
async function failExecution(deps: AppDeps, executionId: string, err: Error) {
  deps.logger.error({ err, executionId }, 'workflow execution failed');
  const reason = `internal error: ${err.message}`.slice(0, 500);
  await runStatement(
    deps.db.pool,
    sql`UPDATE workflow_executions SET status = 'FAILED', wake_at = NULL, exit_reason = ${reason}, completed_at = now(),
          updated_at = now()
        WHERE id = ${executionId} AND status IN ('RUNNING', 'WAITING')`,
  ).catch(() => {});
}
