import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { CursorQuery, commonErrors, cursorPage, ErrorEnvelope, Timestamp } from '../common.js';
import { meta } from '../meta.js';
import { ConditionFilter, ConditionTree, ConditionUnit } from './conditions.js';
import { TopicReference } from './topics.js';

const c = initContract();

export const WorkflowStepType = z.enum([
  'SEND_EMAIL',
  'DELAY',
  'WAIT_FOR_EVENT',
  'CONDITION',
  'WEBHOOK',
  'UPDATE_CONTACT',
  'EXIT',
]);
export type WorkflowStepType = z.infer<typeof WorkflowStepType>;

export const ExecutionStatus = z.enum(['RUNNING', 'WAITING', 'COMPLETED', 'EXITED', 'FAILED', 'CANCELLED']);
export type ExecutionStatus = z.infer<typeof ExecutionStatus>;
/** Executions that still hold a contact (re-entry and delete checks). */
export const ACTIVE_EXECUTION_STATUSES = ['RUNNING', 'WAITING'] as const;

export const StepRunStatus = z.enum(['RUNNING', 'WAITING', 'COMPLETED', 'SKIPPED', 'FAILED', 'CANCELLED']);
export type StepRunStatus = z.infer<typeof StepRunStatus>;

/** `branch` of a transition: CONDITION sources need yes/no; WAIT_FOR_EVENT sources may use event/timeout. */
export const TransitionBranch = z.enum(['yes', 'no', 'event', 'timeout']);
export type TransitionBranch = z.infer<typeof TransitionBranch>;

/** The same value set as a condition's `within` unit: one enum under both names. */
export const DurationUnit = ConditionUnit;
export type DurationUnit = ConditionUnit;

export const RecipientType = z.enum(['CONTACT', 'CUSTOM']);
export type RecipientType = z.infer<typeof RecipientType>;
export const WebhookMethod = z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
export type WebhookMethod = z.infer<typeof WebhookMethod>;
export const SubscriptionAction = z.enum(['none', 'subscribe', 'unsubscribe']);
export type SubscriptionAction = z.infer<typeof SubscriptionAction>;
export const WorkflowFieldSource = z.enum(['contact', 'data', 'event', 'workflow', 'history']);
export type WorkflowFieldSource = z.infer<typeof WorkflowFieldSource>;
const YEAR_SECONDS = 366 * 24 * 3600;
const EventName = z.string().trim().min(1).max(200);
const HeaderName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, 'must be an HTTP header name');

/** Step configs, one schema per step type (REFERENCE.md), validated when a step is added or changed. */
export const SendEmailConfig = z
  .object({
    templateId: z.string().uuid(),
    recipient: z
      .object({
        type: RecipientType.default('CONTACT'),
        customEmail: z.string().trim().toLowerCase().email().max(254).optional(),
      })
      .refine((r) => r.type === 'CONTACT' || r.customEmail !== undefined, {
        message: 'CUSTOM recipients need customEmail',
        path: ['customEmail'],
      })
      .optional()
      .describe('Default: the contact; CUSTOM sends to a fixed address with the contact’s data'),
    topicId: TopicReference.describe(
      'A topic of the project: the step sends only to a recipient subscribed to it (and subscribed), else it is skipped',
    ),
  })
  .strict();

export const DelayConfig = z
  .object({ amount: z.number().int().min(1), unit: DurationUnit })
  .strict()
  .refine((d) => d.amount * { seconds: 1, minutes: 60, hours: 3600, days: 86400 }[d.unit] <= YEAR_SECONDS, {
    message: 'A delay is at most one year',
    path: ['amount'],
  });

export const WaitForEventConfig = z
  .object({
    eventName: EventName,
    timeout: z
      .number()
      .int()
      .min(1)
      .max(YEAR_SECONDS)
      .optional()
      .describe('Seconds; without it the wait lasts until the event'),
  })
  .strict();

/** A full condition tree, or one filter (Plunk’s shape) that stands for a one-filter tree. */
export const ConditionConfig = z.union([z.object({ condition: ConditionTree }).strict(), ConditionFilter.strict()]);

export const WebhookConfig = z
  .object({
    url: z.string().trim().min(1).max(2000).describe('http(s); `{{variables}}` are filled in'),
    method: WebhookMethod.default('POST'),
    headers: z.record(HeaderName, z.string().max(2000)).optional(),
    body: z
      .unknown()
      .optional()
      .describe('JSON; strings inside are rendered. Default: contact, workflow, execution, event'),
  })
  .strict();

export const UpdateContactConfig = z
  .object({
    updates: z.record(z.unknown()).optional().describe('Data keys to set (null removes); string values are rendered'),
    subscriptionAction: SubscriptionAction.default('none'),
  })
  .strict();

export const ExitConfig = z.object({ reason: z.string().max(500).optional() }).strict();

export const STEP_CONFIGS = {
  SEND_EMAIL: SendEmailConfig,
  DELAY: DelayConfig,
  WAIT_FOR_EVENT: WaitForEventConfig,
  CONDITION: ConditionConfig,
  WEBHOOK: WebhookConfig,
  UPDATE_CONTACT: UpdateContactConfig,
  EXIT: ExitConfig,
} as const satisfies Record<WorkflowStepType, z.ZodTypeAny>;
export type StepConfig<T extends WorkflowStepType> = z.output<(typeof STEP_CONFIGS)[T]>;

const Position = z.object({ x: z.number(), y: z.number() });
const StepName = z.string().trim().min(1).max(200);

const workflowStepObject = z.object({
  id: z.string().uuid(),
  workflowId: z.string().uuid(),
  type: WorkflowStepType,
  name: z.string(),
  position: Position,
  config: z.record(z.unknown()),
  templateId: z.string().uuid().nullable().describe('SEND_EMAIL steps: the template they send'),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
type WorkflowStepObject = typeof workflowStepObject;
/** `WorkflowStep` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface WorkflowStepSchema extends WorkflowStepObject {}
export const WorkflowStep: WorkflowStepSchema = workflowStepObject;
export type WorkflowStep = z.infer<typeof WorkflowStep>;

export const WorkflowTransition = z.object({
  id: z.string().uuid(),
  workflowId: z.string().uuid(),
  fromStepId: z.string().uuid(),
  toStepId: z.string().uuid(),
  branch: TransitionBranch.nullable(),
  createdAt: Timestamp,
});
export type WorkflowTransition = z.infer<typeof WorkflowTransition>;

export const TriggerConfig = z.object({ eventName: EventName });

export const Workflow = z.object({
  id: z.string().uuid(),
  name: z.string(),
  description: z.string().nullable(),
  triggerType: z.literal('EVENT'),
  triggerConfig: TriggerConfig,
  enabled: z.boolean(),
  allowReentry: z.boolean(),
  projectId: z.string().uuid(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  executions: z.object({ active: z.number().int(), total: z.number().int() }).describe('RUNNING + WAITING, and all'),
});
export type Workflow = z.infer<typeof Workflow>;

const workflowDetailObject = Workflow.extend({
  steps: z.array(WorkflowStep),
  transitions: z.array(WorkflowTransition),
});
type WorkflowDetailObject = typeof workflowDetailObject;
/** `WorkflowDetail` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface WorkflowDetailSchema extends WorkflowDetailObject {}
export const WorkflowDetail: WorkflowDetailSchema = workflowDetailObject;

export const WorkflowCreate = z.object({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullable().optional(),
  triggerType: z.literal('EVENT').default('EVENT'),
  triggerConfig: TriggerConfig.describe('The event whose recording starts an execution'),
  allowReentry: z.boolean().default(false),
  enabled: z.boolean().optional().describe('Workflows are created disabled; true is refused (400)'),
});

export const WorkflowUpdate = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  description: z.string().max(2000).nullable().optional(),
  triggerType: z.literal('EVENT').optional(),
  triggerConfig: TriggerConfig.optional(),
  enabled: z.boolean().optional().describe('Enabling checks the graph: 422 naming what is wrong'),
  allowReentry: z.boolean().optional(),
});

export const StepCreate = z.object({
  type: WorkflowStepType,
  name: StepName.optional(),
  position: Position.optional(),
  config: z.record(z.unknown()).default({}).describe('Checked against the step type’s schema'),
});

export const StepUpdate = z.object({
  name: StepName.optional(),
  position: Position.optional(),
  config: z.record(z.unknown()).optional().describe('Replaces the config; checked against the step type'),
});

export const TransitionCreate = z.object({
  fromStepId: z.string().uuid(),
  toStepId: z.string().uuid(),
  branch: TransitionBranch.nullable().optional(),
});

export const StepRun = z.object({
  id: z.string().uuid(),
  stepId: z.string().uuid().nullable(),
  stepType: WorkflowStepType,
  stepName: z.string(),
  status: StepRunStatus,
  output: z.record(z.unknown()).nullable(),
  error: z.string().nullable(),
  attempts: z.number().int(),
  startedAt: Timestamp,
  finishedAt: Timestamp.nullable(),
});

const executionObject = z.object({
  id: z.string().uuid(),
  workflowId: z.string().uuid(),
  contactId: z.string().uuid(),
  status: ExecutionStatus,
  currentStepId: z.string().uuid().nullable(),
  waitingFor: z.string().nullable().describe('WAIT_FOR_EVENT: the event name awaited'),
  nextRunAt: Timestamp.nullable().describe('When a DELAY ends, a wait times out or a retry runs'),
  exitReason: z.string().nullable(),
  context: z.record(z.unknown()).describe('`event` (trigger or awaited event data), `workflow` (start context)'),
  startedAt: Timestamp,
  completedAt: Timestamp.nullable(),
  updatedAt: Timestamp,
});
type ExecutionObject = typeof executionObject;
/** `Execution` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface ExecutionSchema extends ExecutionObject {}
export const Execution: ExecutionSchema = executionObject;
export type Execution = z.infer<typeof Execution>;

const executionDetailObject = Execution.extend({ steps: z.array(StepRun) });
type ExecutionDetailObject = typeof executionDetailObject;
/** `ExecutionDetail` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface ExecutionDetailSchema extends ExecutionDetailObject {}
export const ExecutionDetail: ExecutionDetailSchema = executionDetailObject;

export const ExecutionListQuery = CursorQuery.extend({
  status: ExecutionStatus.optional(),
  contactId: z.string().uuid().optional(),
});

export const WorkflowField = z.object({
  field: z.string().describe('Use as a CONDITION filter field'),
  source: WorkflowFieldSource,
  type: z.string().describe('string, number, boolean, date, object, array or mixed'),
  operators: z.array(z.string()),
});

const WorkflowId = z.object({ id: z.string().uuid() });
const StepParams = z.object({ id: z.string().uuid(), stepId: z.string().uuid() });
const TransitionParams = z.object({ id: z.string().uuid(), transitionId: z.string().uuid() });
const ExecutionParams = z.object({ id: z.string().uuid(), executionId: z.string().uuid() });
const dashboard = meta({ auth: 'dashboard', permission: 'project.use' });
const notFound = { 404: ErrorEnvelope };

export const workflowsContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/workflows',
      summary: 'Workflows, newest first',
      metadata: dashboard,
      responses: { 200: z.object({ data: z.array(Workflow) }), ...commonErrors },
    },
    create: {
      method: 'POST',
      path: '/workflows',
      summary: 'Create an EVENT-triggered workflow (disabled)',
      metadata: meta({
        auth: 'dashboard',
        permission: 'project.use',
        example: { name: 'Welcome', triggerConfig: { eventName: 'signed-up' }, allowReentry: false },
      }),
      body: WorkflowCreate,
      responses: { 201: WorkflowDetail, 400: ErrorEnvelope, ...commonErrors },
    },
    fields: {
      method: 'GET',
      path: '/workflows/fields',
      summary: 'Fields usable in CONDITION steps: contact fields, data keys, the trigger event’s data',
      metadata: dashboard,
      query: z.object({
        eventName: z.string().max(200).optional().describe('The trigger event whose recorded data keys to list'),
      }),
      responses: { 200: z.object({ data: z.array(WorkflowField) }), ...commonErrors },
    },
    get: {
      method: 'GET',
      path: '/workflows/:id',
      summary: 'A workflow with its steps and transitions',
      metadata: dashboard,
      pathParams: WorkflowId,
      responses: { 200: WorkflowDetail, ...notFound, ...commonErrors },
    },
    update: {
      method: 'PATCH',
      path: '/workflows/:id',
      summary: 'Change name, description, trigger, enabled, allowReentry',
      metadata: dashboard,
      pathParams: WorkflowId,
      body: WorkflowUpdate,
      responses: { 200: WorkflowDetail, 400: ErrorEnvelope, ...notFound, ...commonErrors },
    },
    delete: {
      method: 'DELETE',
      path: '/workflows/:id',
      summary: 'Delete a workflow (409 while executions are RUNNING or WAITING)',
      metadata: dashboard,
      pathParams: WorkflowId,
      body: c.noBody(),
      responses: { 204: c.noBody(), 409: ErrorEnvelope, ...notFound, ...commonErrors },
    },
    addStep: {
      method: 'POST',
      path: '/workflows/:id/steps',
      summary: 'Add a step',
      metadata: dashboard,
      pathParams: WorkflowId,
      body: StepCreate,
      responses: { 201: WorkflowStep, 400: ErrorEnvelope, ...notFound, ...commonErrors },
    },
    updateStep: {
      method: 'PATCH',
      path: '/workflows/:id/steps/:stepId',
      summary: 'Change a step’s name, position or config',
      metadata: dashboard,
      pathParams: StepParams,
      body: StepUpdate,
      responses: { 200: WorkflowStep, 400: ErrorEnvelope, ...notFound, ...commonErrors },
    },
    deleteStep: {
      method: 'DELETE',
      path: '/workflows/:id/steps/:stepId',
      summary: 'Delete a step; `splice=true` connects its predecessors to its successor',
      metadata: dashboard,
      pathParams: StepParams,
      query: z.object({ splice: z.enum(['true', 'false']).optional() }),
      body: c.noBody(),
      responses: { 204: c.noBody(), 409: ErrorEnvelope, ...notFound, ...commonErrors },
    },
    addTransition: {
      method: 'POST',
      path: '/workflows/:id/transitions',
      summary: 'Connect two steps; CONDITION sources need branch yes/no, WAIT_FOR_EVENT may use event/timeout',
      metadata: dashboard,
      pathParams: WorkflowId,
      body: TransitionCreate,
      responses: { 201: WorkflowTransition, 400: ErrorEnvelope, 409: ErrorEnvelope, ...notFound, ...commonErrors },
    },
    deleteTransition: {
      method: 'DELETE',
      path: '/workflows/:id/transitions/:transitionId',
      summary: 'Remove a transition',
      metadata: dashboard,
      pathParams: TransitionParams,
      body: c.noBody(),
      responses: { 204: c.noBody(), ...notFound, ...commonErrors },
    },
    startExecution: {
      method: 'POST',
      path: '/workflows/:id/executions',
      summary: 'Start an execution for a contact by hand (409 when re-entry forbids it)',
      metadata: dashboard,
      pathParams: WorkflowId,
      body: z.object({
        contactId: z.string().uuid(),
        context: z.record(z.unknown()).optional().describe('Available to steps as `workflow.*`'),
      }),
      responses: { 201: Execution, 409: ErrorEnvelope, ...notFound, ...commonErrors },
    },
    listExecutions: {
      method: 'GET',
      path: '/workflows/:id/executions',
      summary: 'Executions, newest first, by status',
      metadata: dashboard,
      pathParams: WorkflowId,
      query: ExecutionListQuery,
      responses: { 200: cursorPage(Execution), 400: ErrorEnvelope, ...notFound, ...commonErrors },
    },
    getExecution: {
      method: 'GET',
      path: '/workflows/:id/executions/:executionId',
      summary: 'One execution with its step records',
      metadata: dashboard,
      pathParams: ExecutionParams,
      responses: { 200: ExecutionDetail, ...notFound, ...commonErrors },
    },
    cancelExecution: {
      method: 'DELETE',
      path: '/workflows/:id/executions/:executionId',
      summary: 'Cancel a RUNNING or WAITING execution (its timers go with it)',
      metadata: dashboard,
      pathParams: ExecutionParams,
      body: c.noBody(),
      responses: { 200: Execution, 409: ErrorEnvelope, ...notFound, ...commonErrors },
    },
    cancelAll: {
      method: 'POST',
      path: '/workflows/:id/executions/cancel-all',
      summary: 'Cancel every RUNNING or WAITING execution of the workflow',
      metadata: dashboard,
      pathParams: WorkflowId,
      body: c.noBody(),
      responses: { 200: z.object({ cancelled: z.number().int() }), ...notFound, ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

export const workflowSchemas = {
  Workflow,
  WorkflowDetail,
  WorkflowStep,
  WorkflowTransition,
  Execution,
  ExecutionDetail,
  StepRun,
};
