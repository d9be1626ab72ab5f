import type { StepConfig, TransitionBranch } from '@pigeon/contract';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { preparedRows, sql } from '../../db/query.js';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../kit/errors.js';
import { billingLimitExceeded, chargeEmails } from '../billing/public.js';
import { composeMessage } from '../composition/public.js';
import { evaluateTree, evaluation, loadFacts, loadScope, prepareCondition, UNIT_MS } from '../conditions/public.js';
import { applyDataRules, type ContactRow, toContactDto, updateContact, upsertContact } from '../contacts/public.js';
import { requireVerifiedSender } from '../domains/public.js';
import { PRIORITY, queueEmail } from '../email-states/public.js';
import { shouldTrack } from '../engagement/public.js';
import { renderTemplate } from '../rendering/public.js';
import type { TemplateRow } from '../templates/public.js';
import { isSubscribedToTopic } from '../topics/public.js';
import type { ExecutionRow } from './executions.js';
import { conditionOf, type StepRow } from './graph.js';

/** What one step did: go on (by a branch), pause, end the execution, or call a webhook outside the transaction. */
export type Outcome =
  | { kind: 'next'; branch: TransitionBranch | null; output?: Record<string, unknown>; skipped?: boolean }
  | { kind: 'pause'; until: Date | null; event?: string; output?: Record<string, unknown> }
  | { kind: 'exit'; reason: string }
  | { kind: 'fail'; error: string; output?: Record<string, unknown> }
  | { kind: 'webhook' };

/** One execution being advanced inside its claim transaction. */
export interface StepContext {
  client: pg.PoolClient;
  deps: AppDeps;
  exec: ExecutionRow;
  workflowName: string;
  /** Loaded on first use; reloaded after UPDATE_CONTACT. */
  contact?: ContactRow;
}

export async function contactOf(ctx: StepContext): Promise<ContactRow> {
  if (!ctx.contact) {
    const [row] = await preparedRows<ContactRow>(
      ctx.client,
      'workflows.contact',
      sql`SELECT * FROM contacts WHERE id = ${ctx.exec.contact_id}::uuid`,
    );
    if (!row) throw new AppError('not-found', 'NOT_FOUND', 'The contact no longer exists');
    ctx.contact = row;
  }
  return ctx.contact;
}

/** Variables of everything a step renders: the contact's data, `event`, `workflow`, `contact`, `execution`. */
export function variablesOf(ctx: StepContext, contact: ContactRow): Record<string, unknown> {
  return {
    ...contact.data,
    data: contact.data,
    email: contact.email,
    contact: toContactDto(contact),
    event: ctx.exec.context.event ?? {},
    workflow: ctx.exec.context.workflow ?? {},
    execution: { id: ctx.exec.id, workflowId: ctx.exec.workflow_id, workflowName: ctx.workflowName },
  };
}

const config = <T extends keyof typeof RUNNERS>(step: StepRow) => step.config as StepConfig<T>;

async function sendEmailStep(ctx: StepContext, step: StepRow): Promise<Outcome> {
  const cfg = config<'SEND_EMAIL'>(step);
  const [template] = await preparedRows<TemplateRow>(
    ctx.client,
    'workflows.template',
    sql`SELECT * FROM templates WHERE project_id = ${ctx.exec.project_id}::uuid AND id = ${cfg.templateId}::uuid`,
  );
  if (!template) return { kind: 'fail', error: `Template ${cfg.templateId} no longer exists` };
  const contact = await contactOf(ctx);
  const custom = cfg.recipient?.type === 'CUSTOM' ? cfg.recipient.customEmail : undefined;
  const topicId = cfg.topicId ?? null;
  if (!custom && (template.type === 'MARKETING' || topicId) && !contact.subscribed) {
    return { kind: 'next', branch: null, skipped: true, output: { reason: 'unsubscribed', templateId: template.id } };
  }
  if (!custom && topicId && !(await isSubscribedToTopic(ctx.client, contact.id, topicId))) {
    const output = { reason: 'not_subscribed_to_topic', templateId: template.id, topicId };
    return { kind: 'next', branch: null, skipped: true, output };
  }
  const sender = await requireVerifiedSender(ctx.client, ctx.exec.project_id, template.from_email);
  // Over the monthly workflows cap the step fails (the execution says why) before anything is written.
  const refusal = await chargeEmails(ctx.client, ctx.exec.project_id, 'workflows', 1);
  if (refusal) {
    return { kind: 'fail', error: billingLimitExceeded(refusal).message, output: { reason: 'BILLING_LIMIT_EXCEEDED' } };
  }
  // A fixed address gets the contact's data but is a recipient (a contact) of its own, as on /v1/send.
  const recipient = custom
    ? (
        await upsertContact(ctx.client, {
          projectId: ctx.exec.project_id,
          email: custom,
          subscribed: undefined,
          subscribedIfNew: false,
          changes: applyDataRules(undefined, { storeObjects: false }),
          source: 'workflow',
        })
      ).contact
    : contact;
  const emailId = uuidv7();
  const tracked = shouldTrack(sender.trackingMode, template.type, undefined);
  const message = composeMessage(
    { subject: template.subject, html: template.body, type: template.type },
    recipient,
    contact.data,
    emailId,
    {
      publicUrl: ctx.deps.config.http.publicUrl,
      trackingHost: sender.trackingHost,
      linkSecret: ctx.deps.config.secrets.linkSigning,
      tracked,
      unsubscribeMailbox: sender.unsubscribeMailbox,
      variables: variablesOf(ctx, contact),
      topicId,
    },
  );
  await queueEmail(ctx.client, {
    id: emailId,
    projectId: ctx.exec.project_id,
    contactId: recipient.id,
    templateId: template.id,
    workflowExecutionId: ctx.exec.id,
    type: template.type,
    source: 'WORKFLOW',
    priority: PRIORITY.workflow,
    from: { email: template.from_email, name: template.from_name },
    replyTo: template.reply_to,
    to: { email: recipient.email, name: null },
    subject: message.subject,
    html: message.html,
    text: message.text,
    headers: message.headers,
    tracked,
  });
  return { kind: 'next', branch: null, output: { emailId, to: recipient.email, templateId: template.id } };
}

async function conditionStep(ctx: StepContext, step: StepRow): Promise<Outcome> {
  const { tree } = prepareCondition(conditionOf(step.config), { workflow: true });
  const scope = await loadScope(ctx.client, ctx.exec.project_id, [tree]);
  const facts = await loadFacts(ctx.client, ctx.exec.project_id, [ctx.exec.contact_id], [tree], scope);
  const contact = facts.get(ctx.exec.contact_id);
  if (!contact) return { kind: 'fail', error: 'The contact no longer exists' };
  contact.context = ctx.exec.context as Record<string, unknown>;
  const matched = evaluateTree(tree, contact, evaluation(scope));
  return { kind: 'next', branch: matched ? 'yes' : 'no', output: { result: matched } };
}

function delayStep(ctx: StepContext, step: StepRow): Outcome {
  const { amount, unit } = config<'DELAY'>(step);
  const until = new Date(ctx.deps.clock.nowMs() + amount * UNIT_MS[unit]);
  return { kind: 'pause', until, output: { until: until.toISOString() } };
}

function waitStep(ctx: StepContext, step: StepRow): Outcome {
  const { eventName, timeout } = config<'WAIT_FOR_EVENT'>(step);
  const until = timeout ? new Date(ctx.deps.clock.nowMs() + timeout * 1000) : null;
  return { kind: 'pause', until, event: eventName, output: { eventName, timeoutAt: until?.toISOString() ?? null } };
}

/** Renders every string inside a JSON value (webhook bodies, contact updates). */
export function renderDeep(value: unknown, vars: Record<string, unknown>): unknown {
  if (typeof value === 'string') return renderTemplate(value, vars, { html: false });
  if (Array.isArray(value)) return value.map((v) => renderDeep(v, vars));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderDeep(v, vars)]));
  }
  return value;
}

async function updateContactStep(ctx: StepContext, step: StepRow): Promise<Outcome> {
  const cfg = config<'UPDATE_CONTACT'>(step);
  const contact = await contactOf(ctx);
  const updates = renderDeep(cfg.updates ?? {}, variablesOf(ctx, contact)) as Record<string, unknown>;
  const changes = applyDataRules(updates, { storeObjects: true });
  const subscribed = { none: undefined, subscribe: true, unsubscribe: false }[cfg.subscriptionAction];
  const updated = await updateContact(ctx.client, ctx.exec.project_id, contact.id, {
    subscribed,
    changes,
    source: 'workflow',
  });
  if (!updated) return { kind: 'fail', error: 'The contact no longer exists' };
  ctx.contact = updated;
  return {
    kind: 'next',
    branch: null,
    output: { set: Object.keys(changes.set), removed: changes.unset, subscribed: updated.subscribed },
  };
}

const RUNNERS = {
  SEND_EMAIL: sendEmailStep,
  CONDITION: conditionStep,
  DELAY: delayStep,
  WAIT_FOR_EVENT: waitStep,
  UPDATE_CONTACT: updateContactStep,
  EXIT: (_ctx: StepContext, step: StepRow): Outcome => ({
    kind: 'exit',
    reason: config<'EXIT'>(step).reason ?? 'exit step',
  }),
  // The call happens outside the claim transaction (runner.ts): nothing to do in it.
  WEBHOOK: (): Outcome => ({ kind: 'webhook' }),
};

/**
 * Runs one step inside the execution's transaction. Errors a user can fix (an unverified sender,
 * a missing template) fail the step with their message; anything else propagates and rolls back.
 */
export async function runStep(ctx: StepContext, step: StepRow): Promise<Outcome> {
  try {
    return await RUNNERS[step.type](ctx, step);
  } catch (err) {
    if (err instanceof AppError) return { kind: 'fail', error: err.message };
    throw err;
  }
}
