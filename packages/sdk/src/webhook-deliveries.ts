import { contract } from './contract.js';
import { paginate } from './pagination.js';
import type { RequestOptions, Transport } from './transport.js';
import type { WebhookDelivery, WebhookDeliveryListQuery, WebhookDeliveryPage } from './types.js';

/**
 * Deliveries of one endpoint with their attempts, as `pigeon.webhooks.deliveries`: what was
 * sent, each attempt's status code, latency, answer and error; replay one.
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
}
