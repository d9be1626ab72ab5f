import { contract } from './contract.js';
import { type WaitForJobOptions, waitForJob } from './jobs.js';
import { paginate } from './pagination.js';
import type { RequestOptions, Transport } from './transport.js';
import type {
  Job,
  JobAccepted,
  WebhookDelivery,
  WebhookDeliveryListQuery,
  WebhookDeliveryPage,
  WebhookDeliveryRecoveryBody,
} from './types.js';

/**
 * Deliveries of one endpoint with their attempts, as `pigeon.webhooks.deliveries`: what was
 * sent, each attempt's status code, latency, answer and error; replay one, or recover every
 * failed one of a time range after an outage.
 */
export class WebhookDeliveries {
  constructor(private readonly transport: Transport) {}

  /** One page, newest first. */
  readonly list = (
    endpointId: string,
    query: WebhookDeliveryListQuery = {},
    options?: RequestOptions,
  ): Promise<WebhookDeliveryPage> =>
    this.transport.call(contract.webhookEndpoints.deliveries, { params: { id: endpointId }, query }, options);

  /** Every delivery matching `query`, fetching pages lazily. */
  readonly all = (
    endpointId: string,
    query: WebhookDeliveryListQuery = {},
    options?: RequestOptions,
  ): AsyncGenerator<WebhookDelivery, void, undefined> =>
    paginate((cursor) => this.list(endpointId, { ...query, cursor }, options), query.cursor);

  readonly get = (endpointId: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDelivery> =>
    this.transport.call(contract.webhookEndpoints.delivery, { params: { id: endpointId, deliveryId } }, options);

  /** Send it again now, with the same `webhook-id` and payload. */
  readonly replay = (endpointId: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDelivery> =>
    this.transport.call(
      contract.webhookEndpoints.replay,
      { params: { id: endpointId, deliveryId }, body: {} },
      options,
    );

  /**
   * Send again every FAILED delivery created in `[after, before)` (`before` defaults to now), as
   * replays: a job, `waitForRecovery(endpointId, jobId)` until it is done.
   */
  readonly recover = (
    endpointId: string,
    range: WebhookDeliveryRecoveryBody,
    options?: RequestOptions,
  ): Promise<JobAccepted> =>
    this.transport.call(contract.webhookEndpoints.recover, { params: { id: endpointId }, body: range }, options);

  /** A recovery's progress: `processed` deliveries looked at, `updated` sent again, `skipped` not FAILED. */
  readonly recovery = (endpointId: string, jobId: string, options?: RequestOptions): Promise<Job> =>
    this.transport.call(contract.webhookEndpoints.recovery, { params: { id: endpointId, jobId } }, options);

  /** Polls a recovery until it is `completed` or `failed`. */
  readonly waitForRecovery = (
    endpointId: string,
    jobId: string,
    wait: Omit<WaitForJobOptions, 'kind'> = {},
    options?: RequestOptions,
  ): Promise<Job> =>
    waitForJob((poll) => this.recovery(endpointId, jobId, poll), jobId, { ...wait, kind: 'bulk' }, options);
}
