import { contract } from './contract.js';
import { WorkflowExecutions } from './executions.js';
import type { RequestOptions, Transport } from './transport.js';
import type {
  Workflow,
  WorkflowCreateBody,
  WorkflowDetail,
  WorkflowField,
  WorkflowFieldsQuery,
  WorkflowStep,
  WorkflowStepInput,
  WorkflowStepType,
  WorkflowStepUpdate,
  WorkflowTransition,
  WorkflowTransitionInput,
  WorkflowUpdateBody,
} from './types.js';

/** Options of `workflows.steps.remove`, besides the per-call ones. */
export interface RemoveStepOptions extends RequestOptions {
  /** Re-point the transitions that led to the step at its successor, so a chain stays connected (default false). */
  splice?: boolean;
}

/**
 * Steps of a workflow, as `pigeon.workflows.steps`. On an enabled workflow, every change to steps
 * or transitions must leave the graph runnable (422 `VALIDATION_ERROR` otherwise, as `enable`
 * answers). Every method is a bound function.
 */
export class WorkflowSteps {
  constructor(private readonly transport: Transport) {}

  /**
   * Add a step; its `config` is checked against the step `type` (422 `VALIDATION_ERROR` naming the
   * field; 400 `BAD_REQUEST` for a SEND_EMAIL template not in the project). Connect it with
   * `transitions.add`: the first step is the one no transition leads to.
   */
  readonly add = (workflowId: string, body: WorkflowStepInput, options?: RequestOptions): Promise<WorkflowStep> =>
    this.transport.call(contract.workflows.addStep, { params: { id: workflowId }, body }, options);

  /**
   * Change a step's `name`, `position` or `config` (which replaces the whole config; its type cannot
   * change). Type the config with the step type: `steps.update<'DELAY'>(id, stepId, { config: … })`.
   */
  readonly update = <T extends WorkflowStepType = WorkflowStepType>(
    workflowId: string,
    stepId: string,
    body: WorkflowStepUpdate<T>,
    options?: RequestOptions,
  ): Promise<WorkflowStep> =>
    this.transport.call(contract.workflows.updateStep, { params: { id: workflowId, stepId }, body }, options);

  /**
   * Delete a step and its transitions; with `splice`, what led to it leads to its one successor
   * instead. 409 `CONFLICT` while executions are at the step, or to splice a step with several ways out.
   */
  readonly remove = async (workflowId: string, stepId: string, options: RemoveStepOptions = {}): Promise<void> => {
    const { splice, ...requestOptions } = options;
    const query = { splice: splice === undefined ? undefined : splice ? ('true' as const) : ('false' as const) };
    await this.transport.call(
      contract.workflows.deleteStep,
      { params: { id: workflowId, stepId }, query },
      requestOptions,
    );
  };
}

/** Transitions between the steps of a workflow, as `pigeon.workflows.transitions`. Every method is a bound function. */
export class WorkflowTransitions {
  constructor(private readonly transport: Transport) {}

  /**
   * Connect two steps. Out of a CONDITION step, `branch` is `yes` or `no`; out of a WAIT_FOR_EVENT
   * step, `event`, `timeout` or none; out of other steps, none; out of an EXIT step, no transition
   * at all (400 `BAD_REQUEST` otherwise). A step has one transition per branch: 409 `CONFLICT` for a
   * second one.
   */
  readonly add = (
    workflowId: string,
    body: WorkflowTransitionInput,
    options?: RequestOptions,
  ): Promise<WorkflowTransition> =>
    this.transport.call(contract.workflows.addTransition, { params: { id: workflowId }, body }, options);

  /** Remove a transition. */
  readonly remove = async (workflowId: string, transitionId: string, options?: RequestOptions): Promise<void> => {
    await this.transport.call(
      contract.workflows.deleteTransition,
      { params: { id: workflowId, transitionId } },
      options,
    );
  };
}

/**
 * Workflows of the key's project (secret key), as `pigeon.workflows`: an event recorded for a
 * contact (`triggerConfig.eventName`) starts an execution that walks the workflow's steps. Build the
 * graph with `steps` and `transitions`, then `enable` it; follow runs with `executions`. Every method
 * is a bound function, so it can be passed around on its own.
 */
export class Workflows {
  /** Steps: `add`, `update`, `remove`. */
  readonly steps: WorkflowSteps;
  /** Transitions between steps: `add`, `remove`. */
  readonly transitions: WorkflowTransitions;
  /** Executions: `start`, `list`, `all`, `get`, `cancel`, `cancelAll`. */
  readonly executions: WorkflowExecutions;

  constructor(private readonly transport: Transport) {
    this.steps = new WorkflowSteps(transport);
    this.transitions = new WorkflowTransitions(transport);
    this.executions = new WorkflowExecutions(transport);
  }

  /** Every workflow of the project, newest first (not paginated), with its execution counts. */
  readonly list = async (options?: RequestOptions): Promise<Workflow[]> =>
    (await this.transport.call(contract.workflows.list, {}, options)).data;

  /** Create a workflow triggered by `triggerConfig.eventName`. It starts disabled and empty: add steps, then `enable`. */
  readonly create = (body: WorkflowCreateBody, options?: RequestOptions): Promise<WorkflowDetail> =>
    this.transport.call(contract.workflows.create, { body }, options);

  /** A workflow with its steps and transitions. */
  readonly get = (id: string, options?: RequestOptions): Promise<WorkflowDetail> =>
    this.transport.call(contract.workflows.get, { params: { id } }, options);

  /** Change the name, description, trigger, `enabled` or `allowReentry`. */
  readonly update = (id: string, body: WorkflowUpdateBody, options?: RequestOptions): Promise<WorkflowDetail> =>
    this.transport.call(contract.workflows.update, { params: { id }, body }, options);

  /**
   * Enable the workflow: its trigger event starts executions from now on. The graph is checked
   * first: 422 `VALIDATION_ERROR` with one entry in `errors` per problem (no steps, unreachable
   * steps, a CONDITION without both branches, a missing template, a cycle without a pause).
   */
  readonly enable = (id: string, options?: RequestOptions): Promise<WorkflowDetail> =>
    this.update(id, { enabled: true }, options);

  /** Disable the workflow: its trigger no longer starts executions (running ones go on; see `executions.cancelAll`). */
  readonly disable = (id: string, options?: RequestOptions): Promise<WorkflowDetail> =>
    this.update(id, { enabled: false }, options);

  /** Delete a workflow (409 `CONFLICT` while executions are RUNNING or WAITING; `executions.cancelAll` first). */
  readonly delete = async (id: string, options?: RequestOptions): Promise<void> => {
    await this.transport.call(contract.workflows.delete, { params: { id } }, options);
  };

  /**
   * Fields usable in CONDITION filters, with their type and operators: contact fields and data keys;
   * with `eventName` (the trigger event), also its recorded data keys as `event.<key>` and its
   * history as `event.<eventName>`.
   */
  readonly fields = async (query: WorkflowFieldsQuery = {}, options?: RequestOptions): Promise<WorkflowField[]> =>
    (await this.transport.call(contract.workflows.fields, { query }, options)).data;
}
