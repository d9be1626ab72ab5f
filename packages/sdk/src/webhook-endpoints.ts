import { contract } from './contract.js';
import type { RequestOptions, Transport } from './transport.js';
import type {
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointCreateBody,
  WebhookEndpointUpdateBody,
} from './types.js';

/**
 * Webhook endpoints of the key's project, as `pigeon.webhooks.endpoints`: where Pigeon POSTs
 * events, each with its own signing secret. Every method is a bound function.
 */
export class WebhookEndpoints {
  constructor(private readonly transport: Transport) {}

  /** Add an endpoint; the answer carries its `secret` (verify with `webhooks.verify`). */
  readonly create = (body: WebhookEndpointCreateBody, options?: RequestOptions): Promise<WebhookEndpoint> =>
    this.transport.call(contract.webhookEndpoints.create, { body }, options);

  /** Every endpoint of the project. */
  readonly list = async (options?: RequestOptions): Promise<WebhookEndpoint[]> =>
    (await this.transport.call(contract.webhookEndpoints.list, {}, options)).data;

  readonly get = (id: string, options?: RequestOptions): Promise<WebhookEndpoint> =>
    this.transport.call(contract.webhookEndpoints.get, { params: { id } }, options);

  /** Change the URL, description, event types; `enabled: true` re-enables one Pigeon disabled. */
  readonly update = (id: string, body: WebhookEndpointUpdateBody, options?: RequestOptions): Promise<WebhookEndpoint> =>
    this.transport.call(contract.webhookEndpoints.update, { params: { id }, body }, options);

  readonly delete = async (id: string, options?: RequestOptions): Promise<void> => {
    await this.transport.call(contract.webhookEndpoints.delete, { params: { id } }, options);
  };

  /** A new secret; the old one keeps signing for `overlapHours` (default 24), so receivers can switch without losing events. */
  readonly rotateSecret = (id: string, overlapHours?: number, options?: RequestOptions): Promise<WebhookEndpoint> =>
    this.transport.call(contract.webhookEndpoints.rotateSecret, { params: { id }, body: { overlapHours } }, options);

  /** Queue a `webhook.test` event for this endpoint; returns its delivery. */
  readonly test = (id: string, options?: RequestOptions): Promise<WebhookDelivery> =>
    this.transport.call(contract.webhookEndpoints.test, { params: { id }, body: {} }, options);
}
