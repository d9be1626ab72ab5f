import { contract } from './contract.js';
import { paginate } from './pagination.js';
import type { RequestOptions, Transport } from './transport.js';
import type {
  Execution,
  ExecutionCancelAllResult,
  ExecutionDetail,
  ExecutionListQuery,
  ExecutionPage,
  ExecutionStartBody,
} from './types.js';

/**
 * Executions of a workflow, as `pigeon.workflows.executions`: one contact's run through the
 * workflow's steps, started by the trigger event or by hand with `start`. Every method is a bound
 * function, so it can be passed around on its own.
 */
export class WorkflowExecutions {
  constructor(private readonly transport: Transport) {}

  /**
   * Start an execution for a contact by hand (the workflow need not be enabled, but its graph must
   * be runnable, else 422 `VALIDATION_ERROR`); `context` is available to steps as `workflow.*`.
   * 409 `CONFLICT` when the contact is in the workflow already, or has been and re-entry is off.
   */
  readonly start = (workflowId: string, body: ExecutionStartBody, options?: RequestOptions): Promise<Execution> =>
    this.transport.call(contract.workflows.startExecution, { params: { id: workflowId }, body }, options);

  /** One page of executions, newest first; filter by `status`, `contactId`. Pass the returned `cursor` for the next one. */
  readonly list = (
    workflowId: string,
    query: ExecutionListQuery = {},
    options?: RequestOptions,
  ): Promise<ExecutionPage> =>
    this.transport.call(contract.workflows.listExecutions, { params: { id: workflowId }, query }, options);

  /**
   * Every execution matching `query`, fetching pages lazily as the loop goes (from `query.cursor`):
   * `for await (const execution of pigeon.workflows.executions.all(id, { status: 'FAILED' })) …`
   */
  readonly all = (
    workflowId: string,
    query: ExecutionListQuery = {},
    options?: RequestOptions,
  ): AsyncGenerator<Execution, void, undefined> =>
    paginate((cursor) => this.list(workflowId, { ...query, cursor }, options), query.cursor);

  /** An execution with its step records (`steps`: status, output, error and attempts of each step run). */
  readonly get = (workflowId: string, executionId: string, options?: RequestOptions): Promise<ExecutionDetail> =>
    this.transport.call(contract.workflows.getExecution, { params: { id: workflowId, executionId } }, options);

  /** Cancel a RUNNING or WAITING execution (its timers go with it); 409 `CONFLICT` once it has ended. */
  readonly cancel = (workflowId: string, executionId: string, options?: RequestOptions): Promise<Execution> =>
    this.transport.call(contract.workflows.cancelExecution, { params: { id: workflowId, executionId } }, options);

  /** Cancel every RUNNING or WAITING execution of the workflow; resolves with how many were `cancelled`. */
  readonly cancelAll = (workflowId: string, options?: RequestOptions): Promise<ExecutionCancelAllResult> =>
    this.transport.call(contract.workflows.cancelAll, { params: { id: workflowId } }, options);
}
