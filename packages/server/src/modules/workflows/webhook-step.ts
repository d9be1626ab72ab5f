import type { StepConfig, WebhookMethod } from '@pigeon/contract';
import { uuidv7 } from 'uuidv7';
import { queryRows, sql } from '../../db/query.js';
import type { AppDeps } from '../../deps.js';
import { CachingResolver } from '../../kit/caching-resolver.js';
import { webhookDeliveries } from '../../metrics/registry.js';
import { toContactDto } from '../contacts/public.js';
import {
  type HostResolver,
  sendWebhook,
  WEBHOOK_DNS,
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_TIMEOUT_MS,
  type WebhookResult,
  webhookRetryDelayMs,
  webhookSecrets,
} from '../webhooks/public.js';
import type { StepRow } from './graph.js';
import { contactOf, renderDeep, type StepContext, variablesOf } from './steps.js';

/** While a call is in flight the execution is leased; a worker that dies lets another retry after this. */
const LEASE_MS = WEBHOOK_TIMEOUT_MS + 30_000;

/** A webhook attempt committed before the call: the same `webhook-id` on every attempt of the step. */
export interface WebhookCall {
  executionId: string;
  projectId: string;
  stepId: string;
  runId: string;
  webhookId: string;
  attempt: number;
  request: { url: string; method: WebhookMethod; headers: Record<string, string>; body: unknown };
}

/**
 * Inside the claim: opens (or, after a crash or a retry, reuses) the step's record, counts the
 * attempt and leases the execution, all committed before the call goes out.
 */
export async function prepareWebhook(ctx: StepContext, step: StepRow): Promise<WebhookCall> {
  const cfg = step.config as StepConfig<'WEBHOOK'>;
  const [open] = await queryRows<{ id: string; attempts: number }>(
    ctx.client,
    sql`UPDATE workflow_step_runs SET attempts = attempts + 1
        WHERE execution_id = ${ctx.exec.id}::uuid AND step_id = ${step.id}::uuid AND status = 'RUNNING'
        RETURNING id, attempts`,
  );
  const run = open ?? { id: uuidv7(), attempts: 1 };
  if (!open) {
    await queryRows(
      ctx.client,
      sql`INSERT INTO workflow_step_runs (id, execution_id, step_id, step_type, step_name, status, attempts)
          VALUES (${run.id}::uuid, ${ctx.exec.id}::uuid, ${step.id}::uuid, 'WEBHOOK', ${step.name}, 'RUNNING', 1)`,
    );
  }
  await queryRows(
    ctx.client,
    sql`UPDATE workflow_executions SET status = 'RUNNING', current_step_id = ${step.id}::uuid, resume_branch = NULL,
          wake_at = now() + make_interval(secs => ${LEASE_MS / 1000}), updated_at = now()
        WHERE id = ${ctx.exec.id}::uuid`,
  );
  const contact = await contactOf(ctx);
  const vars = variablesOf(ctx, contact);
  const body =
    cfg.body !== undefined
      ? renderDeep(cfg.body, vars)
      : cfg.method === 'GET'
        ? undefined
        : {
            contact: toContactDto(contact),
            workflow: { id: ctx.exec.workflow_id, name: ctx.workflowName },
            execution: { id: ctx.exec.id, startedAt: ctx.exec.started_at.toISOString() },
            event: { name: ctx.exec.context.eventName ?? null, data: ctx.exec.context.event ?? {} },
            step: { id: step.id, name: step.name },
          };
  return {
    executionId: ctx.exec.id,
    projectId: ctx.exec.project_id,
    stepId: step.id,
    runId: run.id,
    webhookId: `msg_${run.id.replace(/-/g, '')}`,
    attempt: run.attempts,
    request: {
      url: renderDeep(cfg.url, vars) as string,
      method: cfg.method,
      headers: renderDeep(cfg.headers ?? {}, vars) as Record<string, string>,
      body,
    },
  };
}

let resolver: { servers: string; resolver: HostResolver } | undefined;
const resolverFor = (servers: string[] | undefined) => {
  const key = (servers ?? []).join(',');
  if (resolver?.servers !== key)
    resolver = { servers: key, resolver: new CachingResolver({ servers, ...WEBHOOK_DNS }) };
  return resolver.resolver;
};

/** The call itself, outside any transaction, signed with the project's secrets. */
export async function sendPreparedWebhook(deps: AppDeps, call: WebhookCall): Promise<WebhookResult> {
  // The project's secret is created on first use; POST /users/@me/projects/:id/webhook-secret shows a new one.
  const secrets = await webhookSecrets(deps.db.pool, call.projectId);
  return sendWebhook({
    ...call.request,
    webhookId: call.webhookId,
    secrets,
    allowPrivateNetworks: deps.config.webhooks.allowPrivateNetworks,
    resolver: resolverFor(deps.config.dns.servers),
  });
}

/**
 * Records an attempt's result on the step: success → COMPLETED (the caller goes on); a retryable
 * failure with attempts left → the execution is due again after the backoff; otherwise the step
 * and the execution fail.
 */
export async function recordWebhookResult(
  ctx: StepContext,
  call: WebhookCall,
  result: WebhookResult,
): Promise<'continue' | 'retry' | 'failed'> {
  const output = {
    webhookId: call.webhookId,
    url: result.url,
    statusCode: result.statusCode,
    durationMs: Math.round(result.durationMs),
    response: result.responseBody,
  };
  const retry = result.outcome === 'retryable' && call.attempt < WEBHOOK_MAX_ATTEMPTS;
  const status = result.outcome === 'success' ? 'COMPLETED' : retry ? 'RUNNING' : 'FAILED';
  webhookDeliveries.inc({ outcome: result.outcome === 'success' ? 'success' : retry ? 'retryable' : 'failed' });
  await queryRows(
    ctx.client,
    sql`UPDATE workflow_step_runs SET status = ${status}, output = ${JSON.stringify(output)}::jsonb, error = ${result.error},
          finished_at = CASE WHEN ${status} = 'RUNNING' THEN NULL ELSE now() END
        WHERE id = ${call.runId}::uuid`,
  );
  if (result.outcome === 'success') return 'continue';
  if (retry) {
    const delayMs = webhookRetryDelayMs(call.attempt, result.retryAfterMs);
    await queryRows(
      ctx.client,
      sql`UPDATE workflow_executions SET wake_at = now() + make_interval(secs => ${delayMs / 1000}), updated_at = now()
          WHERE id = ${call.executionId}::uuid`,
    );
    return 'retry';
  }
  const reason = `webhook failed after ${call.attempt} attempt(s): ${result.error ?? `HTTP ${result.statusCode}`}`;
  await queryRows(
    ctx.client,
    sql`UPDATE workflow_executions SET status = 'FAILED', wake_at = NULL, exit_reason = ${reason.slice(0, 500)},
          completed_at = now(), updated_at = now() WHERE id = ${call.executionId}::uuid`,
  );
  return 'failed';
}
